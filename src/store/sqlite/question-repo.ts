/** SQL for the building agent's questions. */
import { and, desc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { preparedOnce } from './prepared-once.js';
import type { QuestionRepo } from '../repos.js';
import { questionFilePages, questions } from './schema.js';
import type { QuestionRow } from '../rows.js';

/** Reads and writes the agent's questions and their answers. */
export class SqliteQuestionRepo implements QuestionRepo {
  /** The reads and the answer, prepared on first use (`prepared-once.ts`). */
  private readonly q = preparedOnce(() => prepareStatements(this.db));

  constructor(private readonly db: Db) {}

  async insert(row: QuestionRow): Promise<void> {
    this.db.insert(questions).values(row).run();
  }

  async findById(id: string): Promise<QuestionRow | undefined> {
    return this.q().byId.get({ id });
  }

  /** The unanswered question of a workflow, if any. */
  async pendingOf(workflowId: string): Promise<QuestionRow | undefined> {
    return this.q().pending.get({ workflowId });
  }

  /** The question a workflow asked under `key`, answered or not. */
  async findByKey(workflowId: string, key: string): Promise<QuestionRow | undefined> {
    return this.q().byKey.get({ workflowId, key });
  }

  /** The latest answer the project gave to a question with `key`, in any workflow. */
  async latestAnswer(projectId: string, key: string): Promise<string | undefined> {
    return this.q().latestAnswer.get({ projectId, key })?.answer ?? undefined;
  }

  /** Records the answer if the question is still unanswered. @returns true when it was. */
  async answer(id: string, answer: string, at: string): Promise<boolean> {
    return this.q().answer.run({ id, answer, at }).changes > 0;
  }

  async saveFilePages(questionId: string, pages: string): Promise<void> {
    this.db
      .insert(questionFilePages)
      .values({ questionId, pages })
      .onConflictDoUpdate({ target: questionFilePages.questionId, set: { pages } })
      .run();
  }

  async filePagesOf(questionId: string): Promise<string | undefined> {
    return this.db
      .select({ pages: questionFilePages.pages })
      .from(questionFilePages)
      .where(eq(questionFilePages.questionId, questionId))
      .get()?.pages;
  }
}

/** The repository's fixed statements, their parameters as placeholders of the same names. */
function prepareStatements(db: Db) {
  const workflowId = sql.placeholder('workflowId');
  const key = sql.placeholder('key');
  return {
    byId: db
      .select()
      .from(questions)
      .where(eq(questions.id, sql.placeholder('id')))
      .prepare(),
    pending: db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), isNull(questions.answeredAt)))
      .orderBy(desc(questions.askedAt))
      .prepare(),
    byKey: db
      .select()
      .from(questions)
      .where(and(eq(questions.workflowId, workflowId), eq(questions.key, key)))
      .orderBy(desc(questions.askedAt))
      .prepare(),
    latestAnswer: db
      .select({ answer: questions.answer })
      .from(questions)
      .where(
        and(
          eq(questions.projectId, sql.placeholder('projectId')),
          eq(questions.key, key),
          isNotNull(questions.answeredAt),
        ),
      )
      .orderBy(desc(questions.answeredAt))
      .prepare(),
    answer: db
      .update(questions)
      .set({ answer: sql<string>`${sql.placeholder('answer')}`, answeredAt: sql<string>`${sql.placeholder('at')}` })
      .where(and(eq(questions.id, sql.placeholder('id')), isNull(questions.answeredAt)))
      .prepare(),
  };
}
