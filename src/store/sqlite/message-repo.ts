/** SQL for the conversation of a project. `seq` grows by one per project (the project row's `message_seq`), inside the caller's transaction. */
import { and, asc, eq, gt, max, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { MessageRepo } from '../repos.js';
import { preparedOnce } from './prepared-once.js';
import { messages, projects } from './schema.js';
import type { MessageRow } from '../rows.js';

/** Appends and pages conversation messages. */
export class SqliteMessageRepo implements MessageRepo {
  /** Every statement of the repository, prepared on first use (`prepared-once.ts`). */
  private readonly q = preparedOnce(() => prepareStatements(this.db));

  constructor(private readonly db: Db) {}

  /** Appends a message with the project's next `seq` (its counter moves in the same statement). Call inside a write transaction. */
  async append(row: Omit<MessageRow, 'seq'>): Promise<MessageRow> {
    const q = this.q();
    const counter = q.nextSeq.get({ projectId: row.projectId });
    const seq = counter?.seq ?? (await this.lastSeq(row.projectId)) + 1;
    const full = { ...row, seq };
    q.insert.run({
      id: full.id,
      projectId: full.projectId,
      seq,
      role: full.role,
      type: full.type,
      content: full.content,
      workflowId: full.workflowId ?? null,
      createdAt: full.createdAt,
    });
    return full;
  }

  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  async lastSeq(projectId: string): Promise<number> {
    return this.q().lastSeq.get({ projectId })?.m ?? 0;
  }

  /** Up to `limit` messages with `seq > after`, oldest first. */
  async list(projectId: string, after: number, limit: number): Promise<MessageRow[]> {
    return this.q().page.all({ projectId, after, limit });
  }
}

/** The repository's statements, their parameters as placeholders of the same names. */
function prepareStatements(db: Db) {
  const projectId = sql.placeholder('projectId');
  return {
    nextSeq: db
      .update(projects)
      .set({ messageSeq: sql`${projects.messageSeq} + 1` })
      .where(eq(projects.id, projectId))
      .returning({ seq: projects.messageSeq })
      .prepare(),
    insert: db
      .insert(messages)
      .values({
        id: sql.placeholder('id'),
        projectId,
        seq: sql.placeholder('seq'),
        role: sql.placeholder('role'),
        type: sql.placeholder('type'),
        content: sql.placeholder('content'),
        workflowId: sql.placeholder('workflowId'),
        createdAt: sql.placeholder('createdAt'),
      })
      .prepare(),
    lastSeq: db
      .select({ m: max(messages.seq) })
      .from(messages)
      .where(eq(messages.projectId, projectId))
      .prepare(),
    page: db
      .select()
      .from(messages)
      .where(and(eq(messages.projectId, projectId), gt(messages.seq, sql.placeholder('after'))))
      .orderBy(asc(messages.seq))
      .limit(sql.placeholder('limit'))
      .prepare(),
  };
}
