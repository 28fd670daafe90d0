/**
 * SQL for the conversation of a project. `seq` grows by one per project: the project row's
 * `message_seq`, moved by the same UPDATE that reads it, inside the caller's transaction (on
 * PostgreSQL that row stays locked until the transaction ends, so two nodes appending to one
 * project take turns).
 */
import { and, asc, eq, gt, max, sql } from 'drizzle-orm';
import type { MessageRepo } from '../repos.js';
import type { MessageRow } from '../rows.js';
import type { Dialect, Params } from './dialect.js';

/** Appends and pages conversation messages. */
export class SqlMessageRepo implements MessageRepo {
  private readonly nextSeq;
  private readonly insert;
  private readonly last;
  private readonly page;

  constructor(d: Dialect) {
    const projectId = sql.placeholder('projectId');
    this.nextSeq = d.statement((db, { projects }) =>
      db
        .update(projects)
        .set({ messageSeq: sql`${projects.messageSeq} + 1` })
        .where(eq(projects.id, projectId))
        .returning({ seq: projects.messageSeq }),
    );
    this.insert = d.statement(
      (db, { messages }) =>
        db.insert(messages).values({
          id: sql.placeholder('id'),
          projectId,
          seq: sql.placeholder('seq'),
          role: sql.placeholder('role'),
          type: sql.placeholder('type'),
          content: sql.placeholder('content'),
          workflowId: sql.placeholder('workflowId'),
          createdAt: sql.placeholder('createdAt'),
        }) as unknown as { execute(): Promise<unknown[]> },
    );
    this.last = d.statement((db, { messages }) =>
      db
        .select({ m: max(messages.seq) })
        .from(messages)
        .where(eq(messages.projectId, projectId)),
    );
    this.page = d.statement((db, { messages }) =>
      db
        .select()
        .from(messages)
        .where(and(eq(messages.projectId, projectId), gt(messages.seq, sql.placeholder('after'))))
        .orderBy(asc(messages.seq))
        .limit(sql.placeholder('limit')),
    );
  }

  /** Appends a message with the project's next `seq` (its counter moves in the same statement). Call inside a write transaction. */
  async append(row: Omit<MessageRow, 'seq'>): Promise<MessageRow> {
    const counter = (await this.nextSeq.value({ projectId: row.projectId })) as number | undefined;
    const seq = counter ?? (await this.lastSeq(row.projectId)) + 1;
    // One object, the row and the insert's values both (their names are the placeholders').
    const full: MessageRow = {
      id: row.id,
      projectId: row.projectId,
      seq,
      role: row.role,
      type: row.type,
      content: row.content,
      workflowId: row.workflowId ?? null,
      createdAt: row.createdAt,
    };
    await this.insert.run(full as unknown as Params);
    return full;
  }

  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  async lastSeq(projectId: string): Promise<number> {
    return (await this.last.get({ projectId }))?.m ?? 0;
  }

  /** Up to `limit` messages with `seq > after`, oldest first. */
  async list(projectId: string, after: number, limit: number): Promise<MessageRow[]> {
    return this.page.all({ projectId, after, limit });
  }
}
