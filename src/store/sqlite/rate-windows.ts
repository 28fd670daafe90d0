/**
 * `RateWindows` in SQLite: the `rate_limits` table of the shipped migrations, one atomic UPSERT per
 * claim (the statements `limits/store-rate-limiter.ts` used to prepare on the raw connection).
 */
import type Database from 'better-sqlite3';
import type { RateWindows } from '../port.js';

type Claim = { key: string; size: number; expire: number; now: number; limit: number };

/** The shared request counters (see above). */
export class SqliteRateWindows implements RateWindows {
  private readonly claimStatement: Database.Statement<[Claim], { points: number; expire: number }>;
  private readonly deleteStatement: Database.Statement<[number]>;

  /**
   * @param sqlite the store's open, migrated connection.
   * @param outside runs a call outside any transaction of this process (the store's gate).
   */
  constructor(
    private readonly sqlite: Database.Database,
    private readonly outside: (call: () => Promise<unknown>) => Promise<unknown>,
  ) {
    // Adds the lease to the window's count (a window that has ended starts again), never beyond
    // limit + lease; the caller gets min(lease, limit - count before), computed from the result.
    this.claimStatement = sqlite.prepare(
      `INSERT INTO rate_limits (key, points, expire) VALUES (@key, @size, @expire)
       ON CONFLICT(key) DO UPDATE SET
         points = CASE WHEN expire > @now THEN min(points + @size, @limit + @size) ELSE @size END,
         expire = CASE WHEN expire > @now THEN expire ELSE excluded.expire END
       RETURNING points, expire`,
    );
    this.deleteStatement = sqlite.prepare('DELETE FROM rate_limits WHERE expire < ?');
  }

  claim(claim: Claim): Promise<{ points: number; expire: number } | undefined> {
    return this.outside(async () => this.claimStatement.get(claim)) as Promise<
      { points: number; expire: number } | undefined
    >;
  }

  async deleteExpired(before: number): Promise<void> {
    await this.outside(async () => {
      if (this.sqlite.open) this.deleteStatement.run(before);
    });
  }
}
