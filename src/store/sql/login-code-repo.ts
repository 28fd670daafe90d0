/** SQL for one-time login codes (stored as SHA-256 only). */
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { LoginCodeRepo } from '../repos.js';
import type { LoginCodeRow, UserRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes login codes (hashes only). */
export class SqlLoginCodeRepo implements LoginCodeRepo {
  constructor(private readonly d: Dialect) {}

  async insert(row: LoginCodeRow): Promise<void> {
    await this.d.db.insert(this.d.t.loginCodes).values(row);
  }

  /**
   * Marks the unused, unexpired code with `hash` used at `now` and returns its user; undefined
   * when there is no such code. One statement, so that a code is redeemed at most once even by
   * two processes at the same time (PostgreSQL: the second waits for the first's row lock, then
   * finds it used; SQLite: one writer at a time).
   */
  async consume(hash: string, now: string): Promise<UserRow | undefined> {
    const { loginCodes, users } = this.d.t;
    const used = await this.d.db
      .update(loginCodes)
      .set({ usedAt: now })
      .where(and(eq(loginCodes.codeHash, hash), isNull(loginCodes.usedAt), gt(loginCodes.expiresAt, now)))
      .returning({ userId: loginCodes.userId });
    if (!used[0]) return undefined;
    return (await this.d.db.select().from(users).where(eq(users.id, used[0].userId)))[0];
  }
}
