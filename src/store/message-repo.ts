/** SQL for the conversation of a project. `seq` grows by one per project, inside the caller's transaction. */
import { and, asc, eq, gt, max } from 'drizzle-orm';
import type { Db } from './database.js';
import { messages, type MessageRow } from './schema.js';

/** Appends and pages conversation messages. */
export class MessageRepo {
  constructor(private readonly db: Db) {}

  /** Appends a message with the project's next `seq`. Call inside a write transaction. */
  append(row: Omit<MessageRow, 'seq'>): MessageRow {
    const seq = this.lastSeq(row.projectId) + 1;
    const full = { ...row, seq };
    this.db.insert(messages).values(full).run();
    return full;
  }

  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  lastSeq(projectId: string): number {
    return this.db.select({ m: max(messages.seq) }).from(messages).where(eq(messages.projectId, projectId)).get()?.m ?? 0;
  }

  /** Up to `limit` messages with `seq > after`, oldest first. */
  list(projectId: string, after: number, limit: number): MessageRow[] {
    return this.db
      .select()
      .from(messages)
      .where(and(eq(messages.projectId, projectId), gt(messages.seq, after)))
      .orderBy(asc(messages.seq))
      .limit(limit)
      .all();
  }
}
