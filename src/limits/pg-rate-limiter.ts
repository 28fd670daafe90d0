/**
 * The request limiter of the PostgreSQL store (docs/postgresql.md, "Request rate limiter"): the
 * lease limiter of `store-rate-limiter.ts` with its windows in the migrated `rate_limits` table.
 * A node claims a few counts of a key's window at a time with one atomic UPSERT (1/40 of the
 * limit, at least 1, at most 256) and spends them from memory, so every node and process on one
 * database together allow at most the limit, and at least the limit less what the others hold
 * unspent (under one lease each: with two nodes and 100 a minute, leases of 2, at least 99 of the
 * first 100 calls are allowed when each node spends what it claimed, at least 98 however they split).
 *
 * A key refused in its window is refused from memory until the window ends, without writing.
 * When the database cannot answer (down, or slower than the statement timeout), an in-memory
 * limiter counts instead (per process), so a database problem never refuses every request.
 * Windows are computed from the node's clock when a window starts: a node whose clock is off moves
 * where a window ends, not how many requests it allows.
 */
import type pg from 'pg';
import { createBoundedPool } from '../store/pg/pg-pool.js';
import type { RateWindows } from '../store/store.js';
import { StoreRequestRateLimiter } from './store-rate-limiter.js';

/** The migrated table (`drizzle-pg/`): `key varchar(255)` primary key, `points`, `expire` (Unix ms). */
const TABLE = 'rate_limits';
/** Longest connect or wait for a pooled connection of the limiter's pool (ms). */
const LIMITER_CONNECT_TIMEOUT_MS = 1000;
/** The client gives up on a limiter statement this long after the server should have cancelled it (ms). */
const LIMITER_QUERY_MARGIN_MS = 500;
/** A claim takes 1/LEASE_SHARE of the limit (see the file comment). */
const LEASE_SHARE = 40;

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

/**
 * `RateWindows` in PostgreSQL: one UPSERT per claim, prepared once per connection. The count of a
 * live window grows by `size`, never beyond `limit + size` (the claimer gets
 * `min(size, limit - (points - size))`); an ended window starts again at `size`.
 */
export class PgRateWindows implements RateWindows {
  /** @param pool a pool on a migrated database (see `createRateLimiterPool`); the caller owns it. */
  constructor(private readonly pool: pg.Pool) {}

  async claim(claim: {
    key: string;
    size: number;
    expire: number;
    now: number;
    limit: number;
  }): Promise<{ points: number; expire: number } | undefined> {
    const result = await this.pool.query<{ points: number; expire: string }>({
      name: 'rate-limits-claim',
      text: `INSERT INTO ${TABLE} AS r (key, points, expire) VALUES ($1, $2::integer, $3::bigint)
        ON CONFLICT (key) DO UPDATE SET
          points = CASE WHEN r.expire > $4::bigint THEN LEAST(r.points + $2::integer, $5::integer + $2::integer)
                   ELSE $2::integer END,
          expire = CASE WHEN r.expire > $4::bigint THEN r.expire ELSE EXCLUDED.expire END
        RETURNING points, expire`,
      values: [claim.key, claim.size, claim.expire, claim.now, claim.limit],
    });
    const row = result.rows[0];
    return row && { points: row.points, expire: Number(row.expire) };
  }

  async deleteExpired(before: number): Promise<void> {
    await this.pool.query({
      name: 'rate-limits-sweep',
      text: `DELETE FROM ${TABLE} WHERE expire < $1::bigint`,
      values: [before],
    });
  }
}

/**
 * A request limiter whose counters live in PostgreSQL, shared by every process on the database:
 * at most the limit in all, claimed in leases of 1/40 of it (see the file comment).
 */
export class PgRequestRateLimiter extends StoreRequestRateLimiter {
  /** @param pool a pool on a database migrated with `migratePostgres` (see `createRateLimiterPool`); the caller owns it. */
  constructor(pool: pg.Pool) {
    super(new PgRateWindows(pool), { leaseShare: LEASE_SHARE });
  }
}
