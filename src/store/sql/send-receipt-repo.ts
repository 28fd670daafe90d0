/** SQL for the answers of sends with a `requestId` (docs/contract.md#tools). */
import { and, eq, gte, lt } from 'drizzle-orm';
import type { SendReceiptRepo } from '../repos.js';
import type { SendReceiptRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes the stored answers. */
export class SqlSendReceiptRepo implements SendReceiptRepo {
  constructor(private readonly d: Dialect) {}

  async find(userId: string, requestId: string, since: number): Promise<string | undefined> {
    const { sendReceipts } = this.d.t;
    const rows = await this.d.db
      .select({ result: sendReceipts.result })
      .from(sendReceipts)
      .where(
        and(eq(sendReceipts.userId, userId), eq(sendReceipts.requestId, requestId), gte(sendReceipts.createdAt, since)),
      );
    return rows[0]?.result;
  }

  async put(row: SendReceiptRow, since: number): Promise<void> {
    const { sendReceipts } = this.d.t;
    await this.d.db
      .insert(sendReceipts)
      .values(row)
      .onConflictDoUpdate({
        target: [sendReceipts.userId, sendReceipts.requestId],
        set: { result: row.result, createdAt: row.createdAt },
        setWhere: lt(sendReceipts.createdAt, since),
      });
  }

  async setResult(userId: string, requestId: string, result: string): Promise<void> {
    const { sendReceipts } = this.d.t;
    await this.d.db
      .update(sendReceipts)
      .set({ result })
      .where(and(eq(sendReceipts.userId, userId), eq(sendReceipts.requestId, requestId)));
  }

  async deleteBefore(userId: string, before: number): Promise<void> {
    const { sendReceipts } = this.d.t;
    await this.d.db
      .delete(sendReceipts)
      .where(and(eq(sendReceipts.userId, userId), lt(sendReceipts.createdAt, before)));
  }
}
