/** SQL for answers checked on another node, on PostgreSQL (the twin of `sqlite/answer-check-repo.ts`). */
import { and, asc, eq, isNull, lt } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { AnswerCheckRepo } from '../repos.js';
import type { AnswerCheckRow } from '../rows.js';
import { answerChecks } from './schema.js';

/** Inserts, takes, settles and deletes answer checks. */
export class PgAnswerCheckRepo implements AnswerCheckRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async insert(row: AnswerCheckRow): Promise<void> {
    await this.db.insert(answerChecks).values(row);
  }

  async findById(id: string): Promise<AnswerCheckRow | undefined> {
    return (await this.db.select().from(answerChecks).where(eq(answerChecks.id, id)))[0];
  }

  async listOpen(workflowId?: string): Promise<AnswerCheckRow[]> {
    const open = isNull(answerChecks.checkedBy);
    return this.db
      .select()
      .from(answerChecks)
      .where(workflowId === undefined ? open : and(open, eq(answerChecks.workflowId, workflowId)))
      .orderBy(asc(answerChecks.createdAt), asc(answerChecks.id));
  }

  async take(id: string, runnerId: string): Promise<boolean> {
    const result = await this.db
      .update(answerChecks)
      .set({ checkedBy: runnerId })
      .where(and(eq(answerChecks.id, id), isNull(answerChecks.checkedBy)));
    return (result.rowCount ?? 0) > 0;
  }

  async settle(id: string, runnerId: string, verdict: string): Promise<boolean> {
    const result = await this.db
      .update(answerChecks)
      .set({ verdict })
      .where(and(eq(answerChecks.id, id), eq(answerChecks.checkedBy, runnerId), isNull(answerChecks.verdict)));
    return (result.rowCount ?? 0) > 0;
  }

  async delete(id: string): Promise<void> {
    await this.db.delete(answerChecks).where(eq(answerChecks.id, id));
  }

  async deleteBefore(before: string): Promise<number> {
    const result = await this.db.delete(answerChecks).where(lt(answerChecks.createdAt, before));
    return result.rowCount ?? 0;
  }
}
