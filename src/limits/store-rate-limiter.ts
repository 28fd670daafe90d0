/**
 * The request limiter shared by every process that serves one data dir (README "Limits and
 * plans"): fixed windows counted in the store's `rate_limits` table (created by the shipped
 * migrations; the layout of rate-limiter-flexible's `RateLimiterSQLite`). Counting one request is
 * one prepared UPSERT ... RETURNING on the server's own better-sqlite3 connection: a single
 * statement, so atomic across processes without an explicit transaction, and about a tenth of the
 * cost of the library's limiter, which prepares its statement and a transaction on every call.
 *
 * In front of it, process memory: a key refused in its window is refused from memory until the
 * window ends, so a flood from a limited key writes nothing. If the store fails (locked past the
 * busy timeout), an in-memory limiter answers instead, so a store problem never refuses every
 * request.
 */
import type Database from 'better-sqlite3';
import { MemoryRequestRateLimiter, type RateDecision, type RequestRateLimiter } from './request-rate-limiter.js';

/** Counted requests between two sweeps of expired rows. */
const SWEEP_EVERY = 1000;

/** A request limiter whose counters live in the SQLite store, shared across processes. */
export class StoreRequestRateLimiter implements RequestRateLimiter {
  private readonly count: Database.Statement<[string, number, number, number], { points: number; expire: number }>;
  private readonly deleteExpired: Database.Statement<[number]>;
  /** Keys refused in their current window, with the window's end (Unix ms). */
  private readonly refused = new Map<string, number>();
  private readonly insurance = new MemoryRequestRateLimiter();
  private counted = 0;

  /** @param sqlite the store's open, migrated better-sqlite3 connection. */
  constructor(private readonly sqlite: Database.Database) {
    // A window that has ended starts again at 1; otherwise the count grows and the end stays.
    this.count = sqlite.prepare(
      `INSERT INTO rate_limits (key, points, expire) VALUES (?, 1, ?)
       ON CONFLICT(key) DO UPDATE SET
         points = CASE WHEN expire > ? THEN points + 1 ELSE 1 END,
         expire = CASE WHEN expire > ? THEN expire ELSE excluded.expire END
       RETURNING points, expire`,
    );
    this.deleteExpired = sqlite.prepare('DELETE FROM rate_limits WHERE expire < ?');
  }

  async consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const now = Date.now();
    const id = `${limit}/${windowSeconds}:${key}`;
    const refusedUntil = this.refused.get(id);
    if (refusedUntil !== undefined) {
      if (refusedUntil > now) return decision(limit, limit + 2, refusedUntil, now);
      this.refused.delete(id);
    }
    if (++this.counted % SWEEP_EVERY === 0) this.sweep(now);
    let row: { points: number; expire: number } | undefined;
    try {
      row = this.count.get(id, now + windowSeconds * 1000, now, now);
    } catch {
      return this.insurance.consume(key, limit, windowSeconds);
    }
    if (!row) return this.insurance.consume(key, limit, windowSeconds);
    if (row.points > limit) {
      if (this.refused.size >= 10_000) this.refused.clear();
      this.refused.set(id, row.expire);
    }
    return decision(limit, row.points, row.expire, now);
  }

  /** Deletes windows that ended over an hour ago; a failure (store busy or closed) waits for the next sweep. */
  private sweep(now: number): void {
    try {
      if (this.sqlite.open) this.deleteExpired.run(now - 3_600_000);
    } catch {
      // Best effort: an ended window is started again by the next count anyway.
    }
  }
}

function decision(limit: number, points: number, expire: number, now: number): RateDecision {
  const allowed = points <= limit;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - points),
    resetAt: Math.ceil(expire / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((expire - now) / 1000)),
    ...(!allowed && { firstRefusal: points === limit + 1 }),
  };
}
