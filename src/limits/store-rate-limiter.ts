/**
 * The request limiter shared by every process that serves one data dir (README "Limits and
 * plans"): rate-limiter-flexible's `RateLimiterSQLite` on the store's own better-sqlite3
 * connection, counting in the `rate_limits` table (created by the shipped migrations). One
 * counted request is one upsert in a write transaction, so N processes never allow N times the
 * limit.
 *
 * In front of it, process memory: a key that has used its window is refused from memory until
 * the window ends (`inMemoryBlockOnConsumed`), so a flood from a limited key does not write to
 * the store; and if the store fails (locked past the busy timeout), a memory limiter answers
 * instead (`insuranceLimiter`), so a store problem never refuses every request.
 */
import type Database from 'better-sqlite3';
import { RateLimiterMemory, RateLimiterSQLite } from 'rate-limiter-flexible';
import { FlexibleRequestRateLimiter } from './request-rate-limiter.js';

/** Table that holds the shared counters (see `rateLimits` in `store/schema.ts`). */
const TABLE = 'rate_limits';

/** A request limiter whose counters live in the SQLite store, shared across processes. */
export class StoreRequestRateLimiter extends FlexibleRequestRateLimiter {
  private counted = 0;
  private readonly deleteExpired: Database.Statement;

  /** @param sqlite the store's open better-sqlite3 connection (migrated). */
  constructor(private readonly sqlite: Database.Database) {
    super(
      (limit, windowSeconds, keyPrefix) =>
        new RateLimiterSQLite({
          storeClient: sqlite,
          storeType: 'better-sqlite3',
          tableName: TABLE,
          tableCreated: true,
          // Expired rows are deleted by `sweep` below: the library's own timer would outlive a closed store.
          clearExpiredByTimeout: false,
          points: limit,
          duration: windowSeconds,
          keyPrefix,
          inMemoryBlockOnConsumed: limit,
          insuranceLimiter: new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix }),
        }),
    );
    this.deleteExpired = sqlite.prepare(`DELETE FROM ${TABLE} WHERE expire < ?`);
  }

  override async consume(key: string, limit: number, windowSeconds: number) {
    if (++this.counted % SWEEP_EVERY === 0) this.sweep();
    return super.consume(key, limit, windowSeconds);
  }

  /** Deletes windows that ended over an hour ago; a failure (store busy or closed) waits for the next sweep. */
  private sweep(): void {
    try {
      if (this.sqlite.open) this.deleteExpired.run(Date.now() - 3_600_000);
    } catch {
      // Best effort: stale rows are ignored by the limiter anyway.
    }
  }
}

/** Counted requests between two sweeps of expired rows. */
const SWEEP_EVERY = 1000;
