/**
 * The SQLite adapter of the store port (docs/architecture.md "The store port"): better-sqlite3 with
 * WAL, foreign keys and a busy timeout, wrapped by drizzle, with the shipped migrations of
 * `drizzle/` applied. better-sqlite3 is synchronous; the port is not:
 *
 * - `transaction(fn)`: a per-process FIFO mutex around `BEGIN IMMEDIATE … COMMIT` (other processes
 *   wait on the file's lock, as before). Awaiting a repository of `tx` resolves in microtasks, so a
 *   transaction that is still open when the event loop reaches its next macrotask awaited something
 *   else (a file, the network, a timer): that is reported, and rolled back in strict mode.
 * - `repos`: each call holds the mutex while it runs (at once when it is free, else after the
 *   calls and transactions queued before it), so it never joins (nor reads) another flow's open
 *   transaction, and no transaction begins between the statements of one call.
 * - `events`: this process's committed notices plus the `data_version` poll (`sqlite-events.ts`).
 */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { Repos } from '../repos.js';
import type { ProjectRow } from '../rows.js';
import {
  TransactionSpanError,
  type LockTable,
  type RateWindows,
  type SharedLook,
  type Store,
  type StoreConfig,
  type StoreEvent,
  type Tx,
} from '../port.js';
import { ChangeWatch, ReadCache } from '../read-cache.js';
import { FifoMutex } from './fifo-mutex.js';
import { gatedPrototype, gatedRepo, guardRepo } from './guarded-repos.js';
import * as schema from './schema.js';
import { SqliteEvents } from './sqlite-events.js';
import { RowGeneration } from './row-generation.js';
import { SqliteRateWindows } from './rate-windows.js';
import { sqliteDialect } from './dialect.js';
import { REPO_NAMES, sqlRepos } from '../sql/all-repos.js';
import type { Db } from './db.js';

/** Folder of the shipped migrations: `<package>/drizzle`, both from `src/` and from `dist/`. */
const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'drizzle');

/** The state of one transaction. */
interface TxState {
  open: boolean;
  /** Set when it spanned a macrotask in strict mode: rolled back already. */
  spanned: TransactionSpanError | null;
  events: StoreEvent[];
}

/** The SQLite store; `sqlite` and `db` are for the adapter and tests only (see `sqliteOf` in tests). */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly inMemory: boolean;
  readonly sqlite: Database.Database;
  readonly db: Db;
  readonly repos: Repos;
  readonly events: SqliteEvents;
  readonly rateWindows: RateWindows | null;
  readonly blobs = null;
  readonly databaseUrl = null;
  readonly listening = true;
  private readonly raw: Repos;
  private readonly mutex = new FifoMutex();
  private readonly strict: boolean;
  private readonly onSpan: (error: TransactionSpanError) => void;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly generation: RowGeneration;
  /** See `Store.oneLook`: the first `PRAGMA data_version` read inside `fn` (or any call given `shared`) serves the rest. */
  readonly oneLook: <T>(fn: () => T, shared?: SharedLook) => T;
  /** The prototype of every transaction's object: its repositories' getters (`txRepoGetters`). */
  private readonly txRepos: object;
  /** The transaction begun last (one at a time: the mutex); `open` says whether it still is. */
  private current: TxState | null = null;
  /** Releases the mutex and passes `value` on (`outside`: one `then`, not a `finally`, per call). */
  private readonly releaseWith = (value: unknown): unknown => {
    this.mutex.release();
    return value;
  };
  /** Releases the mutex and throws `error` again. */
  private readonly releaseThrowing = (error: unknown): never => {
    this.mutex.release();
    throw error;
  };
  /** Whether `checkSpan` is queued for the event loop's next check phase. */
  private spanCheckArmed = false;
  /**
   * Runs in the check phase after a transaction began (one `setImmediate` per event-loop turn,
   * not one per transaction): the transaction begun last still open then outlived its microtasks.
   */
  private readonly checkSpan = (): void => {
    this.spanCheckArmed = false;
    const state = this.current;
    this.current = null;
    if (state?.open) this.spanned(state);
  };

  constructor(config: StoreConfig) {
    const sqlite = new Database(config.file);
    this.inMemory = config.file === ':memory:';
    if (!this.inMemory) sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    this.sqlite = sqlite;
    this.db = drizzle(sqlite, { schema });
    if (config.migrate !== false) migrate(this.db, { migrationsFolder: MIGRATIONS_FOLDER });
    this.strict = config.strictTransactions ?? process.env.SVC_STRICT_TRANSACTIONS === '1';
    this.onSpan = config.onTransactionSpan ?? ((error) => process.stderr.write(`${error.stack ?? error.message}\n`));
    this.begin = sqlite.prepare('BEGIN IMMEDIATE');
    this.commit = sqlite.prepare('COMMIT');
    this.rollback = sqlite.prepare('ROLLBACK');
    // One reader of `PRAGMA data_version` for the event poll, the exact watches (the token cache)
    // and the row generation, which may take the last value read (`Store.rowGeneration`).
    const versionStatement = sqlite.prepare('pragma data_version').pluck();
    let lastVersion = versionStatement.get() as number;
    // Inside `oneLook`, the first read serves the rest of it (`Store.oneLook`).
    let sharing: 'off' | 'unread' | 'read' = 'off';
    const dataVersion = () => {
      if (sharing === 'read') return lastVersion;
      if (sharing === 'unread') sharing = 'read';
      return (lastVersion = versionStatement.get() as number);
    };
    this.oneLook = (fn, shared) => {
      if (sharing !== 'off') return fn();
      // A look shared with earlier calls that read already: theirs (or any read since) serves this one.
      sharing = shared?.looked ? 'read' : 'unread';
      try {
        return fn();
      } finally {
        if (shared && sharing === 'read') shared.looked = true;
        sharing = 'off';
      }
    };
    this.events = new SqliteEvents(dataVersion, config.pollMs ?? 250);
    this.generation = new RowGeneration(dataVersion, () => lastVersion);
    // Project rows are read on every request: cached, cleared by other processes' commits.
    const projectCache = new ReadCache<ProjectRow>(new ChangeWatch(this.events));
    this.raw = sqlRepos(sqliteDialect(this.db), projectCache);
    const outside = (call: () => Promise<unknown>) => this.outside(call);
    this.repos = Object.fromEntries(
      REPO_NAMES.map((name) => [name, this.generation.counted(name, guardRepo(this.raw[name], outside))]),
    ) as unknown as Repos;
    this.txRepos = txRepoGetters(this.raw, this.generation);
    this.rateWindows = this.inMemory ? null : new SqliteRateWindows(sqlite, outside);
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    // A free mutex is taken at once: no promise to wait on.
    if (!this.mutex.tryAcquire()) await this.mutex.acquire();
    const state: TxState = { open: true, spanned: null, events: [] };
    let result: T;
    try {
      this.begin.run();
    } catch (error) {
      this.mutex.release();
      throw error;
    }
    // Awaits of tx's repositories resolve in microtasks: reaching the next macrotask means the
    // transaction awaited something else (`checkSpan`).
    this.current = state;
    if (!this.spanCheckArmed) {
      this.spanCheckArmed = true;
      setImmediate(this.checkSpan);
    }
    try {
      result = await fn(this.txOf(state));
      if (state.spanned) throw state.spanned;
      this.commit.run();
    } catch (error) {
      if (!state.spanned && this.sqlite.inTransaction) this.rollback.run();
      throw error;
    } finally {
      if (state.open) {
        state.open = false;
        this.mutex.release();
      }
    }
    if (state.events.length > 0) this.events.deliver(state.events);
    return result;
  }

  clockOffsetMs(): number {
    return 0;
  }

  /** See `Store.rowGeneration` (`row-generation.ts`): one `PRAGMA data_version` read, none with `lastLook`. */
  rowGeneration(lastLook = false): number {
    return this.generation.current(lastLook);
  }

  async ping(): Promise<void> {
    this.sqlite.prepare('select 1').get();
  }

  async close(): Promise<void> {
    this.events.stopPoll();
    if (this.sqlite.open) this.sqlite.close();
  }

  /**
   * A call outside any transaction, holding the mutex until it settles: at once when nobody holds
   * it, else after the calls and transactions queued before it. A repository method may await
   * between its statements (`sql/`), so a transaction must not BEGIN on the one connection until
   * the method is done (its later statements would join the transaction).
   */
  private outside(call: () => Promise<unknown>): Promise<unknown> {
    // A call that throws before returning its promise releases the mutex too: held, it would stall
    // every later call of this process.
    const held = (): Promise<unknown> => {
      try {
        return call().then(this.releaseWith, this.releaseThrowing);
      } catch (error) {
        this.mutex.release();
        return Promise.reject(error);
      }
    };
    if (this.mutex.tryAcquire()) return held();
    return this.mutex.acquire().then(held);
  }

  /**
   * The transaction outlived its microtasks: report it; in strict mode roll it back, end it now,
   * and throw the error out of the event loop's callback (an uncaught exception fails a test run).
   */
  private spanned(state: TxState): void {
    if (!state.open) return;
    const error = new TransactionSpanError();
    this.onSpan(error);
    if (!this.strict) return;
    state.spanned = error;
    state.open = false;
    if (this.sqlite.inTransaction) this.rollback.run();
    this.mutex.release();
    // Uncaught on purpose: a test run reports it as an error even when the caller swallows rejections.
    throw error;
  }

  private txOf(state: TxState): Tx {
    const own = Object.create(this.txRepos) as TxOwn;
    own.state = state;
    own.repos = {};
    return own as unknown as Tx;
  }
}

/** What a transaction object holds of its own: its state and the repositories it has used. */
interface TxOwn {
  state: TxState;
  repos: Record<string, unknown>;
}

/** Throws when the transaction of `state` has ended. */
function checkOpen(state: TxState): void {
  if (!state.open) throw state.spanned ?? new Error('The transaction has ended');
}

/**
 * The prototype of every transaction's object, built once per store (each transaction wrapping
 * its parts anew cost a closure per method per call: docs/performance.md "Round three"): `lock`,
 * `tryLock` and `publish`, which read the transaction's own state, and a getter per repository,
 * which makes the transaction's own (`gatedRepo`, one small object) on first use; each method
 * refuses calls once that transaction has ended and counts writes in the row generation.
 */
function txRepoGetters(raw: Repos, generation: RowGeneration): object {
  const getters = {
    // BEGIN IMMEDIATE holds the file's write lock: every writer is serialised already.
    async lock(this: TxOwn, _table: LockTable, _id: string): Promise<void> {
      checkOpen(this.state);
    },
    async tryLock(this: TxOwn, _table: LockTable, _id: string): Promise<boolean> {
      checkOpen(this.state);
      return true;
    },
    publish(this: TxOwn, event: StoreEvent): void {
      if (this.state.open) this.state.events.push(event);
    },
  };
  for (const name of REPO_NAMES) {
    const methods = gatedPrototype(raw[name], (method, call) => generation.countedCall(name, method, call));
    Object.defineProperty(getters, name, {
      get(this: TxOwn) {
        return (this.repos[name] ??= gatedRepo(methods, this.state));
      },
      enumerable: true,
    });
  }
  return getters;
}

/**
 * Opens (creating if needed) the SQLite database named by `config` and applies every pending migration.
 * @throws if the file cannot be opened or a migration fails.
 */
export function openSqliteStore(config: StoreConfig): SqliteStore {
  return new SqliteStore(config);
}
