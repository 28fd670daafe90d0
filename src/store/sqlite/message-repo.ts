/** SQL for the conversation of a project. `seq` grows by one per project (the project row's `message_seq`), inside the caller's transaction. */
import { and, asc, eq, gt, max, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { MessageRepo } from '../repos.js';
import { messages, projects, type MessageRow } from './schema.js';

/** Appends and pages conversation messages. */
export class SqliteMessageRepo implements MessageRepo {
  constructor(private readonly db: Db) {}

  /** Appends a message with the project's next `seq` (its counter moves in the same statement). Call inside a write transaction. */
  async append(row: Omit<MessageRow, 'seq'>): Promise<MessageRow> {
    const counter = this.db
      .update(projects)
      .set({ messageSeq: sql`${projects.messageSeq} + 1` })
      .where(eq(projects.id, row.projectId))
      .returning({ seq: projects.messageSeq })
      .get();
    const seq = counter?.seq ?? (await this.lastSeq(row.projectId)) + 1;
    const full = { ...row, seq };
    this.db.insert(messages).values(full).run();
    return full;
  }

  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  async lastSeq(projectId: string): Promise<number> {
    return this.db.select({ m: max(messages.seq) }).from(messages).where(eq(messages.projectId, projectId)).get()?.m ?? 0;
  }

  /** Up to `limit` messages with `seq > after`, oldest first. */
  async list(projectId: string, after: number, limit: number): Promise<MessageRow[]> {
    return this.db
      .select()
      .from(messages)
      .where(and(eq(messages.projectId, projectId), gt(messages.seq, after)))
      .orderBy(asc(messages.seq))
      .limit(limit)
      .all();
  }
}
