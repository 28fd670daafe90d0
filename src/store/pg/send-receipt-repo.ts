/** SQL for the answers of sends with a `requestId` (docs/contract.md#tools), on PostgreSQL. */
import { and, eq, gte, lt } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { SendReceiptRepo } from '../repos.js';
import type { SendReceiptRow } from '../rows.js';
import { sendReceipts } from './schema.js';

/** Reads and writes the stored answers. */
export class PgSendReceiptRepo implements SendReceiptRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async find(userId: string, requestId: string, since: number): Promise<string | undefined> {
    const rows = await this.db
      .select({ result: sendReceipts.result })
      .from(sendReceipts)
      .where(
        and(eq(sendReceipts.userId, userId), eq(sendReceipts.requestId, requestId), gte(sendReceipts.createdAt, since)),
      );
    return rows[0]?.result;
  }

  async put(row: SendReceiptRow, since: number): Promise<void> {
    await this.db
      .insert(sendReceipts)
      .values(row)
      .onConflictDoUpdate({
        target: [sendReceipts.userId, sendReceipts.requestId],
        set: { result: row.result, createdAt: row.createdAt },
        setWhere: lt(sendReceipts.createdAt, since),
      });
  }

  async setResult(userId: string, requestId: string, result: string): Promise<void> {
    await this.db
      .update(sendReceipts)
      .set({ result })
      .where(and(eq(sendReceipts.userId, userId), eq(sendReceipts.requestId, requestId)));
  }

  async deleteBefore(userId: string, before: number): Promise<void> {
    await this.db.delete(sendReceipts).where(and(eq(sendReceipts.userId, userId), lt(sendReceipts.createdAt, before)));
  }
}
