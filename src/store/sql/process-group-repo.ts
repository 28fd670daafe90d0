/** SQL for the process groups of running builds (docs/workflows.md, "Build processes"). */
import { and, eq, sql } from 'drizzle-orm';
import type { ProcessGroupRepo } from '../repos.js';
import type { ProcessGroupRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Records, lists and forgets build process groups. */
export class SqlProcessGroupRepo implements ProcessGroupRepo {
  /** The groups of one host: read at every reaper tick, so built once. */
  private readonly byHost;

  constructor(private readonly d: Dialect) {
    this.byHost = d.statement((db, { processGroups }) =>
      db
        .select()
        .from(processGroups)
        .where(eq(processGroups.host, sql.placeholder('host'))),
    );
  }

  /** Records a group (replacing a stale row of the same host and pgid: pgids are reused). */
  async insert(row: ProcessGroupRow): Promise<void> {
    const { processGroups } = this.d.t;
    await this.d.db
      .insert(processGroups)
      .values(row)
      .onConflictDoUpdate({ target: [processGroups.host, processGroups.pgid], set: row });
  }

  /** Forgets one group. */
  async remove(host: string, pgid: number): Promise<void> {
    const { processGroups } = this.d.t;
    await this.d.db.delete(processGroups).where(and(eq(processGroups.host, host), eq(processGroups.pgid, pgid)));
  }

  /** Groups recorded for a project. */
  async listByProject(projectId: string): Promise<ProcessGroupRow[]> {
    const { processGroups } = this.d.t;
    return this.d.db.select().from(processGroups).where(eq(processGroups.projectId, projectId));
  }

  /** Groups recorded on `host`. */
  async listByHost(host: string): Promise<ProcessGroupRow[]> {
    return this.byHost.all({ host });
  }
}
