/** SQL for answers checked on another node (docs/workflows.md "Where answers are checked"). */
import { and, asc, eq, isNull, lt } from 'drizzle-orm';
import type { Db } from './db.js';
import type { AnswerCheckRepo } from '../repos.js';
import { answerChecks } from './schema.js';
import type { AnswerCheckRow } from '../rows.js';

/** Inserts, takes, settles and deletes answer checks. */
export class SqliteAnswerCheckRepo implements AnswerCheckRepo {
  constructor(private readonly db: Db) {}

  async insert(row: AnswerCheckRow): Promise<void> {
    this.db.insert(answerChecks).values(row).run();
  }

  async findById(id: string): Promise<AnswerCheckRow | undefined> {
    return this.db.select().from(answerChecks).where(eq(answerChecks.id, id)).get();
  }

  async listOpen(workflowId?: string): Promise<AnswerCheckRow[]> {
    const open = isNull(answerChecks.checkedBy);
    return this.db
      .select()
      .from(answerChecks)
      .where(workflowId === undefined ? open : and(open, eq(answerChecks.workflowId, workflowId)))
      .orderBy(asc(answerChecks.createdAt), asc(answerChecks.id))
      .all();
  }

  async take(id: string, runnerId: string): Promise<boolean> {
    return (
      this.db
        .update(answerChecks)
        .set({ checkedBy: runnerId })
        .where(and(eq(answerChecks.id, id), isNull(answerChecks.checkedBy)))
        .run().changes > 0
    );
  }

  async settle(id: string, runnerId: string, verdict: string): Promise<boolean> {
    const where = and(eq(answerChecks.id, id), eq(answerChecks.checkedBy, runnerId), isNull(answerChecks.verdict));
    return this.db.update(answerChecks).set({ verdict }).where(where).run().changes > 0;
  }

  async delete(id: string): Promise<void> {
    this.db.delete(answerChecks).where(eq(answerChecks.id, id)).run();
  }

  async deleteBefore(before: string): Promise<number> {
    return this.db.delete(answerChecks).where(lt(answerChecks.createdAt, before)).run().changes;
  }
}
