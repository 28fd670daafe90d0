/** SQL for the process groups of running builds (docs/workflows.md, "Build processes"). */
import { and, eq } from 'drizzle-orm';
import type { Db } from './database.js';
import { processGroups, type ProcessGroupRow } from './schema.js';

/** Records, lists and forgets build process groups. */
export class ProcessGroupRepo {
  constructor(private readonly db: Db) {}

  /** Records a group (replacing a stale row of the same host and pgid: pgids are reused). */
  insert(row: ProcessGroupRow): void {
    this.db.insert(processGroups).values(row).onConflictDoUpdate({ target: [processGroups.host, processGroups.pgid], set: row }).run();
  }

  /** Forgets one group. */
  remove(host: string, pgid: number): void {
    this.db.delete(processGroups).where(and(eq(processGroups.host, host), eq(processGroups.pgid, pgid))).run();
  }

  /** Groups recorded for a project. */
  listByProject(projectId: string): ProcessGroupRow[] {
    return this.db.select().from(processGroups).where(eq(processGroups.projectId, projectId)).all();
  }

  /** Groups recorded on `host`. */
  listByHost(host: string): ProcessGroupRow[] {
    return this.db.select().from(processGroups).where(eq(processGroups.host, host)).all();
  }
}
