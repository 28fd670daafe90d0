/** SQL for answers checked on another node (docs/workflows.md "Where answers are checked"). */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { AnswerCheckRepo } from '../repos.js';
import type { AnswerCheckRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Inserts, takes, settles and deletes answer checks. */
export class SqlAnswerCheckRepo implements AnswerCheckRepo {
  /** The open checks, all or one workflow's: read at every engine tick, so built once. */
  private readonly open;
  private readonly openOf;

  constructor(private readonly d: Dialect) {
    this.open = d.statement((db, { answerChecks }) =>
      db
        .select()
        .from(answerChecks)
        .where(isNull(answerChecks.checkedBy))
        .orderBy(asc(answerChecks.createdAt), asc(answerChecks.id)),
    );
    this.openOf = d.statement((db, { answerChecks }) =>
      db
        .select()
        .from(answerChecks)
        .where(and(isNull(answerChecks.checkedBy), eq(answerChecks.workflowId, sql.placeholder('workflowId'))))
        .orderBy(asc(answerChecks.createdAt), asc(answerChecks.id)),
    );
  }

  async insert(row: AnswerCheckRow): Promise<void> {
    await this.d.db.insert(this.d.t.answerChecks).values(row);
  }

  async findById(id: string): Promise<AnswerCheckRow | undefined> {
    const { answerChecks } = this.d.t;
    return (await this.d.db.select().from(answerChecks).where(eq(answerChecks.id, id)))[0];
  }

  async listOpen(workflowId?: string): Promise<AnswerCheckRow[]> {
    return workflowId === undefined ? this.open.all({}) : this.openOf.all({ workflowId });
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
