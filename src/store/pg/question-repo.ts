/** SQL for the building agent's questions, on PostgreSQL (the twin of `sqlite/question-repo.ts`). */
import { and, desc, eq, isNotNull, isNull } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { QuestionRepo } from '../repos.js';
import type { QuestionRow } from '../rows.js';
import { questionFilePages, questions } from './schema.js';

/** Reads and writes the agent's questions and their answers. */
export class PgQuestionRepo implements QuestionRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async insert(row: QuestionRow): Promise<void> {
    await this.db.insert(questions).values(row);
  }

  async findById(id: string): Promise<QuestionRow | undefined> {
    return (await this.db.select().from(questions).where(eq(questions.id, id)))[0];
  }

  /** The unanswered question of a workflow, if any. */
  async pendingOf(workflowId: string): Promise<QuestionRow | undefined> {
    const rows = await this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), isNull(questions.answeredAt)))
      .orderBy(desc(questions.askedAt))
      .limit(1);
    return rows[0];
  }

  /** The question a workflow asked under `key`, answered or not. */
  async findByKey(workflowId: string, key: string): Promise<QuestionRow | undefined> {
    const rows = await this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), eq(questions.key, key)))
      .orderBy(desc(questions.askedAt))
      .limit(1);
    return rows[0];
  }

  /** The latest answer the project gave to a question with `key`, in any workflow. */
  async latestAnswer(projectId: string, key: string): Promise<string | undefined> {
    const rows = await this.db
      .select({ answer: questions.answer })
      .from(questions)
      .where(and(eq(questions.projectId, projectId), eq(questions.key, key), isNotNull(questions.answeredAt)))
      .orderBy(desc(questions.answeredAt))
      .limit(1);
    return rows[0]?.answer ?? undefined;
  }

  /** Records the answer if the question is still unanswered. @returns true when it was. */
  async answer(id: string, answer: string, at: string): Promise<boolean> {
    const result = await this.db
      .update(questions)
      .set({ answer, answeredAt: at })
      .where(and(eq(questions.id, id), isNull(questions.answeredAt)));
    return (result.rowCount ?? 0) > 0;
  }

  async saveFilePages(questionId: string, pages: string): Promise<void> {
    await this.db
      .insert(questionFilePages)
      .values({ questionId, pages })
      .onConflictDoUpdate({ target: questionFilePages.questionId, set: { pages } });
  }

  async filePagesOf(questionId: string): Promise<string | undefined> {
    return (
      await this.db
        .select({ pages: questionFilePages.pages })
        .from(questionFilePages)
        .where(eq(questionFilePages.questionId, questionId))
    )[0]?.pages;
  }
}
