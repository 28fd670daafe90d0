/**
 * The types of the store port (docs/architecture.md "The store port"): what `store.ts` exports and
 * every adapter implements. Kept apart from `openStore` so that adapters import them without a cycle.
 */
import type { BlobStore } from './blob-store.js';
import type { Repos } from './repos.js';

/** The database behind the store: one SQLite file, or a PostgreSQL database shared by several nodes. */
type Dialect = 'sqlite' | 'postgres';

/** Tables a transaction may lock by id (`Tx.lock`). */
export type LockTable = 'users' | 'projects' | 'workflows';

/**
 * A change notice. `id` is a project id for `project` and `queued`, a workflow id for `workflow`,
 * and `tokens` or `project:<id>` for `cache`.
 */
export interface StoreEvent {
  /**
   * `project`: a project's workflows or conversation changed; `queued`: a workflow of the project
   * may be claimable; `workflow`: a cancel was requested or an answer stored; `cache`: cached rows
   * changed.
   */
  kind: 'project' | 'queued' | 'workflow' | 'cache';
  id: string;
}

/** Change notices from every process on this database. Listeners are called synchronously after the commit: they must only schedule work. */
export interface StoreEvents {
  /** Calls `listener` with the id of every `kind` event. @returns the function that unsubscribes. */
  subscribe(kind: StoreEvent['kind'], listener: (id: string) => void): () => void;
  /**
   * Calls `listener` when notices may have been missed: another process committed (SQLite sees
   * that through `PRAGMA data_version`, not which rows), or a listener connection came back.
   * Caches clear, live views and the engine look again. @returns the function that unsubscribes.
   */
  onReset(listener: () => void): () => void;
  /**
   * Looks for other processes' commits now instead of at the next poll, calling the reset
   * listeners when there were some (SQLite: one `PRAGMA data_version` read). Absent where notices
   * name every change as it commits (PostgreSQL).
   */
  catchUp?(): void;
  /**
   * Calls `listener` when a connection to the database was lost (a restart, a terminated backend,
   * a dead link): the database may be out, and nobody could write meanwhile (the reaper holds back
   * for a lease, docs/operators.md "When PostgreSQL restarts"). Absent where there is no
   * connection to lose (SQLite). @returns the function that unsubscribes.
   */
  onConnectionLost?(listener: () => void): () => void;
}

/** One write transaction: the repositories, bound to it, plus row locks and change notices. */
export interface Tx extends Repos {
  /**
   * Locks a row for the rest of the transaction, so that a check and the write that depends on it
   * cannot interleave with another node's. SQLite: nothing to do (`BEGIN IMMEDIATE` serialises
   * every writer of the file). PostgreSQL: `SELECT 1 … FOR UPDATE`, held until COMMIT or ROLLBACK.
   */
  lock(table: LockTable, id: string): Promise<void>;
  /**
   * Locks a row like `lock` when no other transaction holds it, without waiting (PostgreSQL:
   * `SELECT 1 … FOR UPDATE SKIP LOCKED`; a row this transaction locked already counts as free).
   * A transaction that holds one row lock takes any further one with this, so that two transactions
   * never wait for each other's rows (docs/workflows.md "Locks across nodes"). SQLite: always true.
   * @returns false when another transaction holds the row (or it does not exist): the caller skips it.
   */
  tryLock(table: LockTable, id: string): Promise<boolean>;
  /** Queues a change notice, delivered after COMMIT (dropped on rollback); PostgreSQL also sends it to every node (`pg_notify` on `svc_events`). */
  publish(event: StoreEvent): void;
}

/**
 * The request-rate windows shared by every process on this store (`limits/store-rate-limiter.ts`):
 * one atomic claim of `size` counts of a key's window, and the sweep of old windows.
 */
export interface RateWindows {
  /**
   * Adds `size` to the count of `key`'s window ending at `expire` (a window that has ended at `now`
   * starts again), never beyond `limit + size`. Unix ms throughout.
   * @returns the count after the claim and the window's end.
   */
  claim(claim: {
    key: string;
    size: number;
    expire: number;
    now: number;
    limit: number;
  }): Promise<{ points: number; expire: number } | undefined>;
  /** Deletes windows that ended before `before` (Unix ms). */
  deleteExpired(before: number): Promise<void>;
}

/** One look at other processes' commits shared by several `Store.oneLook` calls (a turn's requests). */
export interface SharedLook {
  /** Whether one of the calls has read already (set by the store). */
  looked: boolean;
}

/** The asynchronous store (see the file comment). */
export interface Store {
  readonly dialect: Dialect;
  /** True for a private in-memory database (nothing is shared with another process). */
  readonly inMemory: boolean;
  /**
   * Reads and single-statement writes, each its own auto-commit. SQLite: they wait while this
   * process has a transaction open (one connection). PostgreSQL: they run at once on another
   * connection and see only what was committed.
   */
  readonly repos: Repos;
  /**
   * Runs `fn` in one write transaction and commits what it wrote, or rolls everything back when it
   * throws. `fn` may await only `tx`'s repositories, `lock` and pure computation: no file, network,
   * timer or builder I/O, no `store.repos`, no other transaction (docs/architecture.md "Inside a
   * transaction"). SQLite: `BEGIN IMMEDIATE … COMMIT` behind a per-process FIFO mutex. PostgreSQL:
   * READ COMMITTED on one pooled connection, retried (at most three runs) on a deadlock or serialization failure:
   * `fn` then runs again, so what it records outside the transaction (claims, counters)
   * must be reset at its start. A transaction still open when the event loop reaches its next macrotask (PostgreSQL: with none
   * of its statements in flight) is reported (and, with `strictTransactions`, rolled back and
   * rejected with `TransactionSpanError`).
   * @returns what `fn` returns, after COMMIT and after the published events were delivered.
   * @throws what `fn` throws (after ROLLBACK); the driver's error when BEGIN or COMMIT fails.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Change notices from every process on this database. */
  readonly events: StoreEvents;
  /**
   * True while change notices from other nodes arrive: PostgreSQL's LISTEN connection is up (a
   * node's `/healthz` answers 503 while it is not); always true on SQLite (its poll needs no connection).
   */
  readonly listening: boolean;
  /**
   * PostgreSQL: the URL the store was opened on, for the parts that hold connections of their own
   * (the request rate limiter's small pool, `limits/pg-rate-limiter.ts`); null on SQLite. It may
   * hold a password: never log it.
   */
  readonly databaseUrl: string | null;
  /** The request-rate windows in this database; null for an in-memory store and on PostgreSQL (its limiter counts there on its own pool). */
  readonly rateWindows: RateWindows | null;
  /** Artifact and workspace bytes in the database: PostgreSQL only (null on SQLite, where they stay on disk). */
  readonly blobs: BlobStore | null;
  /**
   * How far the database's clock is ahead of this process's clock, in ms (0 on SQLite: one host,
   * one clock). Leases are written and compared on the database's clock: `Date.now() +
   * clockOffsetMs()`. PostgreSQL measures it at connect and again now and then.
   */
  clockOffsetMs(): number;
  /**
   * A number that moves whenever the rows a session shows (workflows, questions, artifacts,
   * projects, users) may have changed: this process's writes to them (counted when the write is
   * made, inside a transaction or not) and any commit of another process. Equal numbers from two
   * calls mean a read of those rows made after the first call would still be current; a cache
   * keyed by it is never stale (docs/architecture.md "The session cache"). SQLite: one `PRAGMA
   * data_version` read. PostgreSQL: null (other nodes' commits are not known at once: nothing
   * may be cached by it).
   * @param lastLook take other processes' commits as of the store's last look at them (SQLite: the
   *   last `PRAGMA data_version` read, by any reader: the event poll, an exact watch such as the
   *   token cache's, or this method) instead of looking again. Only for a caller that knows such a
   *   look was made after the request it answers arrived (docs/architecture.md "The reply memo"):
   *   a commit that ended before the request was sent then shows as well. Default false.
   */
  rowGeneration(lastLook?: boolean): number | null;
  /**
   * Runs `fn` (synchronous) with every look at other processes' commits made inside it answered by
   * one: on SQLite the first `PRAGMA data_version` read in `fn` serves every later look in `fn`
   * (the token cache's exact watch, `rowGeneration()`), which then costs no statement; after `fn`
   * returns (and in anything `fn` left to finish asynchronously) each look reads again. With
   * `shared`, the look is shared by every call given the same object: once one of them read, the
   * later ones take that read (or any made since) without a statement. Only for work on requests
   * that had all arrived before the first of those calls started: the one read is made after each
   * of them arrived, as a read per request would be (docs/architecture.md "The reply memo").
   * PostgreSQL: runs `fn` (its looks read nothing).
   * @returns what `fn` returns. @throws what `fn` throws.
   */
  oneLook<T>(fn: () => T, shared?: SharedLook): T;
  /**
   * On a store whose `rowGeneration()` is null (PostgreSQL): a number that moves whenever a
   * project row as `repos.projects.findById` returns it may have changed, as this process's
   * project cache sees it: this process's writes to projects drop their cached rows, and another
   * node's are known when their `cache` notice arrives (docs/postgresql.md "The reply memo").
   * So an answer made of one project row and kept while this number stays put is what that cache
   * would give: never staler than it. Null while the change notices may be missed (the LISTEN
   * connection is down). Absent on SQLite, where `rowGeneration()` covers project rows exactly.
   */
  projectRowGeneration?(): number | null;
  /**
   * The connection pool's use now, for the metrics (docs/metrics.md): absent on a store without a
   * pool (SQLite, one connection per process).
   */
  poolStats?(): PoolStats;
  /** Resolves when the database answers a trivial query. @throws the driver's error otherwise. */
  ping(): Promise<void>;
  /** Stops the event poll (SQLite) or the LISTEN connection (PostgreSQL) and closes the database; calls after it reject. Idempotent. */
  close(): Promise<void>;
}

/** A connection pool's use at one moment, in connections (node-postgres: `totalCount`, `idleCount`, `waitingCount`). */
export interface PoolStats {
  /** Connections open, idle or in use. */
  total: number;
  /** Open connections not in use. */
  idle: number;
  /** Queries waiting for a connection (the pool is exhausted while this is above 0). */
  waiting: number;
}

/** Thrown by a transaction that was still open at the next macrotask (file, network or timer I/O inside it). */
export class TransactionSpanError extends Error {
  constructor() {
    super(
      "A store transaction stayed open across file, network or timer I/O: it was rolled back (only the transaction's repositories may be awaited inside it)",
    );
    this.name = 'TransactionSpanError';
  }
}

/** How to open the store. */
export interface StoreConfig {
  /** The SQLite file, `:memory:` for a private in-memory database (ignored with `databaseUrl`). */
  file: string;
  /** `postgres://…` or `postgresql://…`: the store is that PostgreSQL database instead of the file. */
  databaseUrl?: string;
  /** PostgreSQL: connections in the pool, besides the listener (default 10). */
  poolSize?: number;
  /** PostgreSQL: a session-mode URL for the LISTEN connection (default `databaseUrl`), for a transaction-mode pooler in front. */
  listenUrl?: string;
  /** PostgreSQL: `application_name` of the connections (shows in `pg_stat_activity`). */
  applicationName?: string;
  /** Apply the shipped migrations (default true). */
  migrate?: boolean;
  /**
   * Roll back and reject a transaction that spans a macrotask, and throw `TransactionSpanError`
   * uncaught, instead of only reporting it. Default: on when `SVC_STRICT_TRANSACTIONS=1` (the test
   * set-up sets it, so that such a transaction fails the run).
   */
  strictTransactions?: boolean;
  /** Where a transaction that spans a macrotask is reported. Default: a line on stderr. */
  onTransactionSpan?: (error: TransactionSpanError) => void;
  /** How often other processes' commits are looked for, in ms (default 250). */
  pollMs?: number;
}
