/** SQL for the building agent's questions. */
import { and, desc, eq, isNotNull, isNull } from 'drizzle-orm';
import type { Db } from './db.js';
import type { QuestionRepo } from '../repos.js';
import { questions, type QuestionRow } from './schema.js';

/** Reads and writes the agent's questions and their answers. */
export class SqliteQuestionRepo implements QuestionRepo {
  constructor(private readonly db: Db) {}

  async insert(row: QuestionRow): Promise<void> {
    this.db.insert(questions).values(row).run();
  }

  async findById(id: string): Promise<QuestionRow | undefined> {
    return this.db.select().from(questions).where(eq(questions.id, id)).get();
  }

  /** The unanswered question of a workflow, if any. */
  async pendingOf(workflowId: string): Promise<QuestionRow | undefined> {
    return this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), isNull(questions.answeredAt)))
      .orderBy(desc(questions.askedAt))
      .get();
  }

  /** The question a workflow asked under `key`, answered or not. */
  async findByKey(workflowId: string, key: string): Promise<QuestionRow | undefined> {
    return this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), eq(questions.key, key)))
      .orderBy(desc(questions.askedAt))
      .get();
  }

  /** The latest answer the project gave to a question with `key`, in any workflow. */
  async latestAnswer(projectId: string, key: string): Promise<string | undefined> {
    return this.db
      .select({ answer: questions.answer })
      .from(questions)
      .where(and(eq(questions.projectId, projectId), eq(questions.key, key), isNotNull(questions.answeredAt)))
      .orderBy(desc(questions.answeredAt))
      .get()?.answer ?? undefined;
  }

  /** Records the answer if the question is still unanswered. @returns true when it was. */
  async answer(id: string, answer: string, at: string): Promise<boolean> {
    return (
      this.db
        .update(questions)
        .set({ answer, answeredAt: at })
        .where(and(eq(questions.id, id), isNull(questions.answeredAt)))
        .run().changes > 0
    );
  }
}
