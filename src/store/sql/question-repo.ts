/** SQL for the building agent's questions. */
import { and, desc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { QuestionRepo } from '../repos.js';
import type { QuestionRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes the agent's questions and their answers. */
export class SqlQuestionRepo implements QuestionRepo {
  /** The reads of a session and the answer, built once. */
  private readonly q;

  constructor(private readonly d: Dialect) {
    this.q = statements(d);
  }

  async insert(row: QuestionRow): Promise<void> {
    await this.d.db.insert(this.d.t.questions).values(row);
  }

  async findById(id: string): Promise<QuestionRow | undefined> {
    return this.q.byId.get({ id });
  }

  /** The unanswered question of a workflow, if any. */
  async pendingOf(workflowId: string): Promise<QuestionRow | undefined> {
    return this.q.pending.get({ workflowId });
  }

  /** The question a workflow asked under `key`, answered or not. */
  async findByKey(workflowId: string, key: string): Promise<QuestionRow | undefined> {
    return this.q.byKey.get({ workflowId, key });
  }

  /** The latest answer the project gave to a question with `key`, in any workflow. */
  async latestAnswer(projectId: string, key: string): Promise<string | undefined> {
    return (await this.q.latestAnswer.get({ projectId, key }))?.answer ?? undefined;
  }

  /** Records the answer if the question is still unanswered. @returns true when it was. */
  async answer(id: string, answer: string, at: string): Promise<boolean> {
    return (await this.q.answer.run({ id, answer, at })) > 0;
  }

  async saveFilePages(questionId: string, pages: string): Promise<void> {
    const { questionFilePages } = this.d.t;
    await this.d.db
      .insert(questionFilePages)
      .values({ questionId, pages })
      .onConflictDoUpdate({ target: questionFilePages.questionId, set: { pages } });
  }

  async filePagesOf(questionId: string): Promise<string | undefined> {
    const { questionFilePages } = this.d.t;
    return (
      await this.d.db
        .select({ pages: questionFilePages.pages })
        .from(questionFilePages)
        .where(eq(questionFilePages.questionId, questionId))
    )[0]?.pages;
  }
}

/** The repository's fixed statements, their parameters as placeholders of the same names. */
function statements(d: Dialect) {
  const workflowId = sql.placeholder('workflowId');
  const key = sql.placeholder('key');
  return {
    byId: d.statement((db, { questions }) =>
      db
        .select()
        .from(questions)
        .where(eq(questions.id, sql.placeholder('id'))),
    ),
    pending: d.statement((db, { questions }) =>
      d.first(
        db
          .select()
          .from(questions)
          .where(and(eq(questions.workflowId, workflowId), isNull(questions.answeredAt)))
          .orderBy(desc(questions.askedAt)),
      ),
    ),
    byKey: d.statement((db, { questions }) =>
      d.first(
        db
          .select()
          .from(questions)
          .where(and(eq(questions.workflowId, workflowId), eq(questions.key, key)))
          .orderBy(desc(questions.askedAt)),
      ),
    ),
    latestAnswer: d.statement((db, { questions }) =>
      d.first(
        db
          .select({ answer: questions.answer })
          .from(questions)
          .where(
            and(
              eq(questions.projectId, sql.placeholder('projectId')),
              eq(questions.key, key),
              isNotNull(questions.answeredAt),
            ),
          )
          .orderBy(desc(questions.answeredAt)),
      ),
    ),
    answer: d.statement(
      (db, { questions }) =>
        db
          .update(questions)
          .set({ answer: sql<string>`${sql.placeholder('answer')}`, answeredAt: sql<string>`${sql.placeholder('at')}` })
          .where(and(eq(questions.id, sql.placeholder('id')), isNull(questions.answeredAt))) as unknown as {
          execute(): Promise<unknown[]>;
        },
    ),
  };
}
