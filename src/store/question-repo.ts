/** SQL for the building agent's questions. */
import { and, desc, eq, isNotNull, isNull } from 'drizzle-orm';
import type { Db } from './database.js';
import { questions, type QuestionRow } from './schema.js';

/** Reads and writes the agent's questions and their answers. */
export class QuestionRepo {
  constructor(private readonly db: Db) {}

  insert(row: QuestionRow): void {
    this.db.insert(questions).values(row).run();
  }

  findById(id: string): QuestionRow | undefined {
    return this.db.select().from(questions).where(eq(questions.id, id)).get();
  }

  /** The unanswered question of a workflow, if any. */
  pendingOf(workflowId: string): QuestionRow | undefined {
    return this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), isNull(questions.answeredAt)))
      .orderBy(desc(questions.askedAt))
      .get();
  }

  /** The question a workflow asked under `key`, answered or not. */
  findByKey(workflowId: string, key: string): QuestionRow | undefined {
    return this.db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), eq(questions.key, key)))
      .orderBy(desc(questions.askedAt))
      .get();
  }

  /** The latest answer the project gave to a question with `key`, in any workflow. */
  latestAnswer(projectId: string, key: string): string | undefined {
    return this.db
      .select({ answer: questions.answer })
      .from(questions)
      .where(and(eq(questions.projectId, projectId), eq(questions.key, key), isNotNull(questions.answeredAt)))
      .orderBy(desc(questions.answeredAt))
      .get()?.answer ?? undefined;
  }

  /** Records the answer if the question is still unanswered. @returns true when it was. */
  answer(id: string, answer: string, at: string): boolean {
    return (
      this.db
        .update(questions)
        .set({ answer, answeredAt: at })
        .where(and(eq(questions.id, id), isNull(questions.answeredAt)))
        .run().changes > 0
    );
  }
}
