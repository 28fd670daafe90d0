/** SQL for one-time login codes (stored as SHA-256 only), on PostgreSQL. */
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { LoginCodeRepo } from '../repos.js';
import type { LoginCodeRow, UserRow } from '../rows.js';
import { loginCodes, users } from './schema.js';

/** Reads and writes login codes (hashes only). */
export class PgLoginCodeRepo implements LoginCodeRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async insert(row: LoginCodeRow): Promise<void> {
    await this.db.insert(loginCodes).values(row);
  }

  /**
   * Marks the unused, unexpired code with `hash` used at `now` and returns its user; undefined
   * when there is no such code. One statement, so that a code is redeemed at most once even by
   * two nodes at the same time (the second waits for the first's row lock, then finds it used).
   */
  async consume(hash: string, now: string): Promise<UserRow | undefined> {
    const used = await this.db
      .update(loginCodes)
      .set({ usedAt: now })
      .where(and(eq(loginCodes.codeHash, hash), isNull(loginCodes.usedAt), gt(loginCodes.expiresAt, now)))
      .returning({ userId: loginCodes.userId });
    if (!used[0]) return undefined;
    return (await this.db.select().from(users).where(eq(users.id, used[0].userId)))[0];
  }
}
