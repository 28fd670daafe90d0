/** SQL for the process groups of running builds (docs/workflows.md, "Build processes"). */
import { and, eq } from 'drizzle-orm';
import type { Db } from './db.js';
import type { ProcessGroupRepo } from '../repos.js';
import { processGroups } from './schema.js';
import type { ProcessGroupRow } from '../rows.js';

/** Records, lists and forgets build process groups. */
export class SqliteProcessGroupRepo implements ProcessGroupRepo {
  constructor(private readonly db: Db) {}

  /** Records a group (replacing a stale row of the same host and pgid: pgids are reused). */
  async insert(row: ProcessGroupRow): Promise<void> {
    this.db
      .insert(processGroups)
      .values(row)
      .onConflictDoUpdate({ target: [processGroups.host, processGroups.pgid], set: row })
      .run();
  }

  /** Forgets one group. */
  async remove(host: string, pgid: number): Promise<void> {
    this.db
      .delete(processGroups)
      .where(and(eq(processGroups.host, host), eq(processGroups.pgid, pgid)))
      .run();
  }

  /** Groups recorded for a project. */
  async listByProject(projectId: string): Promise<ProcessGroupRow[]> {
    return this.db.select().from(processGroups).where(eq(processGroups.projectId, projectId)).all();
  }

  /** Groups recorded on `host`. */
  async listByHost(host: string): Promise<ProcessGroupRow[]> {
    return this.db.select().from(processGroups).where(eq(processGroups.host, host)).all();
  }
}
