/**
 * node-postgres pools that survive database faults (docs/operators.md, "When PostgreSQL
 * restarts"). pg-pool listens for a client's `error` only while the client is idle: it removes
 * that listener while the client is checked out, so a connection the server closes under a
 * statement (a restart, `pg_terminate_backend`) would be an unhandled `error` event and end the
 * process. Every client of these pools gets a listener of its own from the moment the pool creates
 * it: a lost connection fails the statement on it (and is reported once), never the process.
 *
 * Every call is bounded on the client's side too, so a database that does not answer (frozen,
 * behind a dead link) fails fast instead of hanging: `connectionTimeoutMillis` bounds a connect and
 * the wait for a pooled connection, `query_timeout` a statement (node-postgres's options). A
 * statement past its `query_timeout` has its connection closed: it may still be running on the
 * server, possibly inside a transaction, so that connection is never used again.
 */
import pg from 'pg';

/** Bounds of one pool, in ms. */
export interface PoolBounds {
  /** Longest connect, and longest wait for a pooled connection (`connectionTimeoutMillis`). */
  connectMs: number;
  /** Longest statement seen from the client (`query_timeout`); keep it above `statement_timeout`. */
  queryMs: number;
}

/** node-postgres's message for a statement past `query_timeout`. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * Creates a `pg.Pool` whose clients always listen for `error` and whose calls are bounded (see the
 * file comment).
 * @param config the pool's options (`connectionString`, `max`, `application_name`, server-side
 *   timeouts...); `connectionTimeoutMillis`, `query_timeout` and `Client` are set from `bounds`
 * @param bounds client-side bounds in ms
 * @param onLost told once per connection that fails (the driver's error, no SQL or password in it)
 * @returns the pool; the caller ends it (`pool.end()`)
 */
export function createBoundedPool(config: pg.PoolConfig, bounds: PoolBounds, onLost: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    ...config,
    connectionTimeoutMillis: bounds.connectMs,
    query_timeout: bounds.queryMs,
    Client: listenedClientClass(onLost),
  });
  // An idle connection the server closes: pg-pool's own listener removes it, then emits this.
  pool.on('error', () => undefined);
  return pool;
}

/** A `pg.Client` class whose instances report their first connection failure and close a connection whose statement timed out. */
function listenedClientClass(onLost: (error: Error) => void): typeof pg.Client {
  return class ListenedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      let reported = false;
      this.on('error', (error: Error) => {
        if (reported) return;
        reported = true;
        onLost(error);
      });
    }

    // The signatures of `pg.Client.query` are many; every one is passed through as it is.
    override query(...args: unknown[]): never {
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (error: Error | null, ...rest: unknown[]) => void;
        args[last] = (error: Error | null, ...rest: unknown[]) => {
          if (error) this.closeIfTimedOut(error);
          callback(error, ...rest);
        };
      }
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      if (result instanceof Promise) result.catch((error: Error) => this.closeIfTimedOut(error));
      return result as never;
    }

    /** A statement past `query_timeout` may still run on the server: its connection is closed. */
    private closeIfTimedOut(error: Error): void {
      if (error?.message !== QUERY_TIMEOUT_MESSAGE) return;
      (this as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
  } as unknown as typeof pg.Client;
}
