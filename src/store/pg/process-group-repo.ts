/** SQL for the process groups of running builds (docs/workflows.md, "Build processes"), on PostgreSQL. */
import { and, eq } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { ProcessGroupRepo } from '../repos.js';
import type { ProcessGroupRow } from '../rows.js';
import { processGroups } from './schema.js';

/** Records, lists and forgets build process groups. */
export class PgProcessGroupRepo implements ProcessGroupRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  /** Records a group (replacing a stale row of the same host and pgid: pgids are reused). */
  async insert(row: ProcessGroupRow): Promise<void> {
    await this.db
      .insert(processGroups)
      .values(row)
      .onConflictDoUpdate({ target: [processGroups.host, processGroups.pgid], set: row });
  }

  /** Forgets one group. */
  async remove(host: string, pgid: number): Promise<void> {
    await this.db.delete(processGroups).where(and(eq(processGroups.host, host), eq(processGroups.pgid, pgid)));
  }

  /** Groups recorded for a project. */
  async listByProject(projectId: string): Promise<ProcessGroupRow[]> {
    return this.db.select().from(processGroups).where(eq(processGroups.projectId, projectId));
  }

  /** Groups recorded on `host`. */
  async listByHost(host: string): Promise<ProcessGroupRow[]> {
    return this.db.select().from(processGroups).where(eq(processGroups.host, host));
  }
}
