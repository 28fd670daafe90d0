/**
 * The request limiter of the PostgreSQL store (docs/postgresql.md, "Request rate limiter"):
 * rate-limiter-flexible's `RateLimiterPostgres` counting fixed windows in the migrated
 * `rate_limits` table, one atomic UPSERT per request, so every node and process on one database
 * together allow exactly the limit (the SQLite limiter, `store-rate-limiter.ts`, claims counts in
 * leases and allows at most the limit across processes).
 *
 * A key that reached its limit is refused from this process's memory until its window ends
 * (`inMemoryBlockOnConsumed` at the limit), without writing. When the database cannot answer, an
 * in-memory limiter counts instead (per process), so a database problem never refuses every
 * request. Windows are computed from the node's clock (the library's choice): a node whose clock
 * is off moves where a window ends, not how many requests it allows.
 */
import type pg from 'pg';
import { createBoundedPool } from '../store/pg/pg-pool.js';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateDecision, RequestRateLimiter } from './request-rate-limiter.js';

/** The migrated table (`drizzle-pg/`): `key varchar(255)` primary key, `points`, `expire` (Unix ms). */
const TABLE = 'rate_limits';
/** Longest connect or wait for a pooled connection of the limiter's pool (ms). */
const LIMITER_CONNECT_TIMEOUT_MS = 1000;
/** The client gives up on a limiter statement this long after the server should have cancelled it (ms). */
const LIMITER_QUERY_MARGIN_MS = 500;
/** Windows remembered as refused, per process; past this the map starts again. */
const MAX_REFUSED_WINDOWS = 10_000;

/**
 * Opens the limiter's own small pool: a request waits on it, so it never queues behind the
 * store's long transactions, and a slow database answers within `statement_timeout` (the
 * in-memory limiter answers then).
 * @param url a `postgres://` or `postgresql://` connection string
 * @param options `max`: connections (default 4); `statementTimeoutMs`: per statement on the server
 *   (default 500); the client gives up 500 ms later, and on a connect after 1 s
 * @returns a `pg.Pool` that connects lazily; the caller ends it (`pool.end()`) after the limiter's last use
 */
export function createRateLimiterPool(
  url: string,
  options: { max?: number; statementTimeoutMs?: number } = {},
): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 500;
  // Every client listens for `error` (a restart never crashes the process) and every call is
  // bounded on the client too: a database that does not answer falls to the in-memory limiter
  // within about a second. A connection lost is not logged: the store's pool reports the outage.
  return createBoundedPool(
    {
      connectionString: url,
      max: options.max ?? 4,
      statement_timeout: statementTimeoutMs,
      application_name: 'mobile-builder-mcp/rate-limits',
    },
    { connectMs: LIMITER_CONNECT_TIMEOUT_MS, queryMs: statementTimeoutMs + LIMITER_QUERY_MARGIN_MS },
    () => undefined,
  );
}

/** A request limiter whose counters live in PostgreSQL, exact across every process on the database. */
export class PgRequestRateLimiter implements RequestRateLimiter {
  /** One library limiter per `<limit>/<windowSeconds>` (its key prefix), as a plan change counts apart. */
  private readonly limiters = new Map<string, RateLimiterPostgres>();
  /** `<limit>/<windowSeconds>:<key>` -> end (Unix ms) of the window this process refused it in. */
  private readonly refused = new Map<string, number>();

  /** @param pool a pool on a database migrated with `migratePostgres` (see `createRateLimiterPool`); the caller owns it. */
  constructor(private readonly pool: pg.Pool) {}

  async consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const id = `${limit}/${windowSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.pool,
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        // Rows of ended windows are deleted an hour later, every 5 minutes (an unref'd timer).
        clearExpiredByTimeout: true,
        keyPrefix: id,
        points: limit,
        duration: windowSeconds,
        inMemoryBlockOnConsumed: limit,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: id, points: limit, duration: windowSeconds }),
      });
      this.limiters.set(id, limiter);
    }
    const now = Date.now();
    try {
      const res = await limiter.consume(key, 1);
      return decision(true, limit, res, now, false);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return decision(
        false,
        limit,
        rejection,
        now,
        this.firstRefusal(`${id}:${key}`, now + rejection.msBeforeNext, now),
      );
    }
  }

  /** True when this process has not refused `windowKey` in the window ending at `windowEnd` (Unix ms) yet. */
  private firstRefusal(windowKey: string, windowEnd: number, now: number): boolean {
    const known = this.refused.get(windowKey);
    if (known !== undefined && known > now) return false;
    if (this.refused.size >= MAX_REFUSED_WINDOWS && known === undefined) this.refused.clear();
    this.refused.set(windowKey, windowEnd);
    return true;
  }
}

function decision(
  allowed: boolean,
  limit: number,
  res: RateLimiterRes,
  now: number,
  firstRefusal: boolean,
): RateDecision {
  return {
    allowed,
    limit,
    remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
    resetAt: Math.ceil((now + res.msBeforeNext) / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    ...(!allowed && { firstRefusal }),
  };
}
