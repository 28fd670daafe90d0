/**
 * The PostgreSQL adapter of the store port (docs/postgresql.md, "The store"): a node-postgres
 * `Pool` wrapped by drizzle, the shipped migrations of `drizzle-pg/` applied under an advisory
 * lock, one repository per table (`*-repo.ts`), change notices by LISTEN/NOTIFY (`pg-events.ts`)
 * and the database's clock (`clock-offset.ts`). Several nodes open one database at once:
 *
 * - `transaction(fn)`: READ COMMITTED on one pooled connection; `tx.lock(table, id)` is
 *   `SELECT 1 … FOR UPDATE`; the published notices go out in one `pg_notify` statement just before
 *   COMMIT, so other nodes get them at COMMIT and never on rollback; this process's listeners get
 *   them right after COMMIT. A deadlock or serialization failure (40P01, 40001) runs `fn` once
 *   more on a fresh transaction.
 * - `repos`: each call is one auto-commit statement on any pooled connection; unlike SQLite it
 *   never waits for this process's open transactions (it sees what was committed).
 * - A transaction that awaits anything but its repositories (a file, the network, a timer) is
 *   reported, and in strict mode rolled back, as on SQLite: it is seen when a macrotask passes
 *   while none of its statements is in flight.
 */
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Repos } from '../repos.js';
import type { ProjectRow } from '../rows.js';
import {
  TransactionSpanError,
  type LockTable,
  type PoolStats,
  type SharedLook,
  type Store,
  type StoreConfig,
  type StoreEvent,
  type Tx,
} from '../port.js';
import { ChangeWatch, ReadCache } from '../read-cache.js';
import { PgBlobStore } from './blob-store.js';
import { ClockOffset } from './clock-offset.js';
import type { PgDb } from './db.js';
import { migratePostgres } from './migrate.js';
import { isRetryable } from './pg-errors.js';
import { createBoundedPool } from './pg-pool.js';
import { EVENTS_CHANNEL, PgEvents } from './pg-events.js';
import * as schema from './schema.js';
import { PgWorkspaceRepo } from './workspace-repo.js';
import { pgDialect } from './dialect.js';
import { REPO_NAMES as SHARED_REPO_NAMES, sqlRepos } from '../sql/all-repos.js';
import type { QueuedRows } from '../sql/workflow-repo.js';

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_APPLICATION_NAME = 'mobile-builder-mcp';
/**
 * Bounds every connection of the pool gets (ms). The server cancels a statement past
 * `STATEMENT_TIMEOUT_MS` (57014) or waiting for a row lock past `LOCK_TIMEOUT_MS` (55P03); the
 * client gives up on a statement the server has not answered within `QUERY_TIMEOUT_MS` (a frozen or
 * unreachable database: the server could not cancel it) and on a connect or a wait for a pooled
 * connection past `CONNECT_TIMEOUT_MS`. Every store statement is small (blobs go in chunks of
 * 256 KiB), so a call fails within seconds when the database does not answer.
 */
const STATEMENT_TIMEOUT_MS = 5_000;
const LOCK_TIMEOUT_MS = 4_000;
const QUERY_TIMEOUT_MS = 6_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
const CONNECT_TIMEOUT_MS = 3_000;
/** `ping()` fails when the database has not answered `select 1` within this (ms). */
const PING_TIMEOUT_MS = 500;
/**
 * How many times a transaction runs when PostgreSQL aborts it as a deadlock's victim or for a
 * serialization failure. A victim's retry can take a row lock before the transaction it lost to
 * is woken, and meet it again: a second retry, after a longer pause, ends such a repeat.
 */
const TX_ATTEMPTS = 3;

/**
 * Waits before attempt `attempt + 1` of a transaction: a random 0 to 25 ms times `attempt`, so
 * the transaction the victim lost to, woken by its rollback, takes its rows first.
 */
function retryPause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 25 * attempt));
}

/** How often the clock offset is measured again (ms). */
const CLOCK_SAMPLE_MS = 10_000;

/** The repositories of a transaction: both backends' and PostgreSQL's own `workspaces`. */
const REPO_NAMES = [...SHARED_REPO_NAMES, 'workspaces'] as const;
const LOCK_TABLES: Record<LockTable, string> = { users: 'users', projects: 'projects', workflows: 'workflows' };

/** The state of one transaction. */
interface TxState {
  open: boolean;
  /** `fn` has returned: COMMIT is under way, the guard stops looking. */
  done: boolean;
  /** Statements of the transaction in flight now. */
  inFlight: number;
  /** The guard has reported it (once per transaction). */
  reported: boolean;
  /** Set when it spanned a macrotask in strict mode: it will be rolled back. */
  spanned: TransactionSpanError | null;
  events: StoreEvent[];
}

/**
 * The PostgreSQL store. Besides the port: `listening` (the change-notice connection is up; a
 * node's `/healthz` says 503 while it is not), `listenerPid` (its server process, for tests) and
 * `databaseUrl`.
 */
export class PgStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly inMemory = false;
  /** No SQLite windows: the request rate is counted by `PgRequestRateLimiter` on its own pool (`databaseUrl`). */
  readonly rateWindows = null;
  readonly repos: Repos;
  readonly events: PgEvents;
  readonly blobs: PgBlobStore;
  readonly databaseUrl: string;
  private readonly pool: pg.Pool;
  private readonly db: NodePgDatabase<typeof schema>;
  private readonly projectCache: ReadCache<ProjectRow>;
  /** Queued workflow rows kept across the pool's and every transaction's repositories (`sql/workflow-repo.ts`). */
  private readonly queuedRows: QueuedRows = new Map();
  private readonly clock: ClockOffset;
  private readonly ownBackends = new Set<number>();
  private readonly strict: boolean;
  private readonly onSpan: (error: TransactionSpanError) => void;
  private closing: Promise<void> | undefined;

  /** Use `openPgStore`, which migrates and connects. */
  constructor(config: StoreConfig & { databaseUrl: string }) {
    this.databaseUrl = config.databaseUrl;
    const applicationName = config.applicationName ?? DEFAULT_APPLICATION_NAME;
    // A connection closed by the server (a restart, pg_terminate_backend), idle or under a
    // statement, fails that statement and is reported, never a crash; the pool opens another.
    this.pool = createBoundedPool(
      {
        connectionString: config.databaseUrl,
        max: config.poolSize ?? DEFAULT_POOL_SIZE,
        application_name: applicationName,
        statement_timeout: STATEMENT_TIMEOUT_MS,
        lock_timeout: LOCK_TIMEOUT_MS,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
      { connectMs: CONNECT_TIMEOUT_MS, queryMs: QUERY_TIMEOUT_MS },
      (error) => {
        process.stderr.write(`store: a database connection failed: ${error.message}\n`);
        this.events.connectionLost();
      },
    );
    this.pool.on('connect', (client) => this.ownBackends.add(backendPid(client)));
    this.pool.on('remove', (client) => this.ownBackends.delete(backendPid(client)));
    this.db = drizzle(this.pool, { schema });
    this.strict = config.strictTransactions ?? process.env.SVC_STRICT_TRANSACTIONS === '1';
    this.onSpan = config.onTransactionSpan ?? ((error) => process.stderr.write(`${error.stack ?? error.message}\n`));
    this.events = new PgEvents(
      config.listenUrl ?? config.databaseUrl,
      applicationName,
      (pid) => this.ownBackends.has(pid),
      (line) => process.stderr.write(`${line}\n`),
    );
    // Project rows are read on every request: cached, cleared by `cache` notices and reconnects.
    this.projectCache = new ReadCache<ProjectRow>(new ChangeWatch(this.events));
    this.events.onReset(() => this.projectCache.clear());
    this.repos = this.reposOn(this.db);
    this.blobs = new PgBlobStore(this.pool);
    this.clock = new ClockOffset(async () => {
      const result = await this.pool.query<{ now: string }>('SELECT svc_now_ms() AS now');
      return Number(result.rows[0]!.now);
    });
  }

  /**
   * Always null (`Store.rowGeneration`): another node's commit is known only when its notice
   * arrives, so no read may be served from a cache keyed by it.
   */
  rowGeneration(): null {
    return null;
  }

  /** `Store.oneLook`: runs `fn`; PostgreSQL's looks at other nodes' commits read nothing. */
  oneLook<T>(fn: () => T, _shared?: SharedLook): T {
    return fn();
  }

  /**
   * `Store.projectRowGeneration`: the project cache's generation (its drops, and the `cache`
   * notices and reconnects that clear it), or null while the LISTEN connection is down.
   */
  projectRowGeneration(): number | null {
    return this.events.listening ? this.projectCache.generation() : null;
  }

  /** True while the change-notice (LISTEN) connection is up (`Store.listening`). */
  /** Connections of the pool (not the listener's): open, idle, and requests waiting for one. */
  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  get listening(): boolean {
    return this.events.listening;
  }

  /** The server process id of the LISTEN connection while it is up, else null (tests end it with `pg_terminate_backend`). */
  get listenerPid(): number | null {
    return this.events.listenerPid;
  }

  /**
   * Connects: the first clock sample, then the LISTEN connection.
   * @throws the driver's error when the database cannot be reached
   */
  async connect(): Promise<void> {
    // Twice: the first round trip also opens the pool's first connection.
    await this.clock.sample();
    await this.clock.sample();
    this.clock.startEvery(CLOCK_SAMPLE_MS);
    await this.events.start();
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const state: TxState = { open: true, done: false, inFlight: 0, reported: false, spanned: null, events: [] };
      try {
        const result = await this.db.transaction(
          async (dtx) => {
            this.watch(state);
            let value: T;
            try {
              value = await fn(this.txOf(state, dtx));
            } finally {
              state.done = true;
            }
            if (state.spanned) throw state.spanned;
            const payloads = state.events.map((e) => `${e.kind}:${e.id}`);
            if (payloads.length > 0) {
              const list = sql.join(
                payloads.map((p) => sql`${p}`),
                sql`, `,
              );
              await dtx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, x) from unnest(array[${list}]::text[]) as x`);
            }
            return value;
          },
          { isolationLevel: 'read committed' },
        );
        state.open = false;
        this.events.deliver(state.events);
        return result;
      } catch (error) {
        state.open = false;
        if (attempt >= TX_ATTEMPTS || state.spanned || !isRetryable(error)) throw error;
        await retryPause(attempt);
      }
    }
  }

  clockOffsetMs(): number {
    return this.clock.offsetMs;
  }

  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the database did not answer within ${PING_TIMEOUT_MS} ms`)),
        PING_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.pool.query('SELECT 1'), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.clock.stop();
      await this.events.stop();
      await this.pool.end();
    })();
    return this.closing;
  }

  /** The repositories on a drizzle handle: the pool's, or a transaction's. */
  private reposOn(db: PgDb): Repos {
    return {
      ...sqlRepos(pgDialect(db), this.projectCache, this.queuedRows),
      workspaces: new PgWorkspaceRepo(db),
    };
  }

  /** Looks at the next macrotask: a transaction still open then, with no statement in flight, awaited something else. */
  private watch(state: TxState): void {
    setImmediate(() => {
      if (state.open && !state.done && state.inFlight === 0 && !state.reported) this.spanned(state);
    });
  }

  /**
   * The transaction awaited something other than its repositories: report it; in strict mode
   * refuse its further statements (it is rolled back when `fn` ends) and throw the error out of
   * the event loop's callback (an uncaught exception fails a test run).
   */
  private spanned(state: TxState): void {
    const error = new TransactionSpanError();
    state.reported = true;
    this.onSpan(error);
    if (!this.strict) return;
    state.spanned = error;
    state.open = false;
    // Uncaught on purpose: a test run reports it as an error even when the caller swallows rejections.
    throw error;
  }

  private txOf(state: TxState, dtx: PgDb): Tx {
    const inside = <R>(call: () => Promise<R>): Promise<R> => {
      if (!state.open)
        return Promise.reject(
          state.spanned ?? new Error('The transaction has ended: its repositories cannot be used any more'),
        );
      state.inFlight++;
      return call().finally(() => {
        if (--state.inFlight === 0) this.watch(state);
      });
    };
    const repos = this.reposOn(dtx);
    const tx: Record<string, unknown> = {
      lock: (table: LockTable, id: string) =>
        inside(async () => {
          await dtx.execute(sql`select 1 from ${sql.identifier(LOCK_TABLES[table])} where id = ${id} for update`);
        }),
      // A row this transaction locked already is returned (a transaction never waits for itself).
      tryLock: (table: LockTable, id: string) =>
        inside(async () => {
          const found = await dtx.execute(
            sql`select 1 from ${sql.identifier(LOCK_TABLES[table])} where id = ${id} for update skip locked`,
          );
          return found.rows.length > 0;
        }),
      publish: (event: StoreEvent) => {
        if (state.open) state.events.push(event);
      },
    };
    for (const name of REPO_NAMES) {
      let repo: unknown;
      Object.defineProperty(tx, name, { get: () => (repo ??= guarded(repos[name]!, inside)), enumerable: true });
    }
    return tx as unknown as Tx;
  }
}

/** `repo` with every method run through `around`. */
function guarded<R extends object>(repo: R, around: (call: () => Promise<unknown>) => Promise<unknown>): R {
  const proto = Object.getPrototypeOf(repo) as Record<string, unknown>;
  const wrapped: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(proto)) {
    const method = proto[name];
    if (name === 'constructor' || typeof method !== 'function' || name.startsWith('_')) continue;
    wrapped[name] = (...args: unknown[]) =>
      around(() => (method as (...a: unknown[]) => Promise<unknown>).apply(repo, args));
  }
  return wrapped as R;
}

function backendPid(client: pg.PoolClient): number {
  return (client as unknown as { processID: number }).processID;
}

/**
 * Opens the PostgreSQL store named by `config.databaseUrl`: applies the pending migrations under
 * the advisory lock (unless `migrate: false`), then connects (clock sample, LISTEN connection).
 * @throws the driver's error when the database cannot be reached or a migration fails
 */
export async function openPgStore(config: StoreConfig & { databaseUrl: string }): Promise<PgStore> {
  if (config.migrate !== false) await migratePostgres(config.databaseUrl);
  const store = new PgStore(config);
  try {
    await store.connect();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}
