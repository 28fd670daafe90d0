/** SQL for answers checked on another node (docs/workflows.md "Where answers are checked"). */
import { and, asc, eq, isNull, lt } from 'drizzle-orm';
import type { AnswerCheckRepo } from '../repos.js';
import type { AnswerCheckRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Inserts, takes, settles and deletes answer checks. */
export class SqlAnswerCheckRepo implements AnswerCheckRepo {
  constructor(private readonly d: Dialect) {}

  async insert(row: AnswerCheckRow): Promise<void> {
    await this.d.db.insert(this.d.t.answerChecks).values(row);
  }

  async findById(id: string): Promise<AnswerCheckRow | undefined> {
    const { answerChecks } = this.d.t;
    return (await this.d.db.select().from(answerChecks).where(eq(answerChecks.id, id)))[0];
  }

  async listOpen(workflowId?: string): Promise<AnswerCheckRow[]> {
    const { answerChecks } = this.d.t;
    const open = isNull(answerChecks.checkedBy);
    return this.d.db
      .select()
      .from(answerChecks)
      .where(workflowId === undefined ? open : and(open, eq(answerChecks.workflowId, workflowId)))
      .orderBy(asc(answerChecks.createdAt), asc(answerChecks.id));
  }

  async take(id: string, runnerId: string): Promise<boolean> {
    const { answerChecks } = this.d.t;
    const result = await this.d.db
      .update(answerChecks)
      .set({ checkedBy: runnerId })
      .where(and(eq(answerChecks.id, id), isNull(answerChecks.checkedBy)));
    return this.d.changes(result) > 0;
  }

  async settle(id: string, runnerId: string, verdict: string): Promise<boolean> {
    const { answerChecks } = this.d.t;
    const result = await this.d.db
      .update(answerChecks)
      .set({ verdict })
      .where(and(eq(answerChecks.id, id), eq(answerChecks.checkedBy, runnerId), isNull(answerChecks.verdict)));
    return this.d.changes(result) > 0;
  }

  async delete(id: string): Promise<void> {
    const { answerChecks } = this.d.t;
    await this.d.db.delete(answerChecks).where(eq(answerChecks.id, id));
  }

  async deleteBefore(before: string): Promise<number> {
    const { answerChecks } = this.d.t;
    return this.d.changes(await this.d.db.delete(answerChecks).where(lt(answerChecks.createdAt, before)));
  }
}
