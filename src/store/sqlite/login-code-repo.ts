/** SQL for one-time login codes (stored as SHA-256 only). */
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from './db.js';
import type { LoginCodeRepo } from '../repos.js';
import { loginCodes, users } from './schema.js';
import type { LoginCodeRow, UserRow } from '../rows.js';

/** Reads and writes login codes (hashes only). */
export class SqliteLoginCodeRepo implements LoginCodeRepo {
  constructor(private readonly db: Db) {}

  async insert(row: LoginCodeRow): Promise<void> {
    this.db.insert(loginCodes).values(row).run();
  }

  /**
   * Marks the unused, unexpired code with `hash` used at `now` and returns its user; undefined
   * when there is no such code. One statement, so that a code is redeemed at most once even by
   * two processes at the same time.
   */
  async consume(hash: string, now: string): Promise<UserRow | undefined> {
    const used = this.db
      .update(loginCodes)
      .set({ usedAt: now })
      .where(and(eq(loginCodes.codeHash, hash), isNull(loginCodes.usedAt), gt(loginCodes.expiresAt, now)))
      .returning({ userId: loginCodes.userId })
      .get();
    if (!used) return undefined;
    return this.db.select().from(users).where(eq(users.id, used.userId)).get();
  }
}
