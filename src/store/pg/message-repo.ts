/**
 * SQL for the conversation of a project, on PostgreSQL (the twin of `sqlite/message-repo.ts`).
 * `seq` grows by one per project: the project row's `message_seq`, moved by the same UPDATE that
 * reads it, so that row stays locked until the caller's transaction ends and two nodes appending
 * to one project take turns.
 */
import { and, asc, eq, gt, max, sql } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { MessageRepo } from '../repos.js';
import type { MessageRow } from '../rows.js';
import { messages, projects } from './schema.js';

/** Appends and pages conversation messages. */
export class PgMessageRepo implements MessageRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  /** Appends a message with the project's next `seq` (its counter moves in the same statement). Call inside a write transaction. */
  async append(row: Omit<MessageRow, 'seq'>): Promise<MessageRow> {
    const counter = await this.db
      .update(projects)
      .set({ messageSeq: sql`${projects.messageSeq} + 1` })
      .where(eq(projects.id, row.projectId))
      .returning({ seq: projects.messageSeq });
    const seq = counter[0]?.seq ?? (await this.lastSeq(row.projectId)) + 1;
    const full = { ...row, seq };
    await this.db.insert(messages).values(full);
    return full;
  }

  /** The project's newest `seq`, 0 for an empty conversation (one index read). */
  async lastSeq(projectId: string): Promise<number> {
    return (
      (
        await this.db
          .select({ m: max(messages.seq) })
          .from(messages)
          .where(eq(messages.projectId, projectId))
      )[0]?.m ?? 0
    );
  }

  /** Up to `limit` messages with `seq > after`, oldest first. */
  async list(projectId: string, after: number, limit: number): Promise<MessageRow[]> {
    return this.db
      .select()
      .from(messages)
      .where(and(eq(messages.projectId, projectId), gt(messages.seq, after)))
      .orderBy(asc(messages.seq))
      .limit(limit);
  }
}
