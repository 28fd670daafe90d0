/** SQL for projects' environment variables (docs/security.md "Project environment"). */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { ProjectEnvRepo } from '../repos.js';
import type { ProjectEnvRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** One row per project and variable name. */
export class SqlProjectEnvRepo implements ProjectEnvRepo {
  /** Every session read lists the names: built once (`Dialect.statement`). */
  private readonly byProject;

  constructor(private readonly d: Dialect) {
    this.byProject = d.statement((db, { projectEnv }) =>
      db
        .select()
        .from(projectEnv)
        .where(eq(projectEnv.projectId, sql.placeholder('projectId')))
        .orderBy(asc(projectEnv.name)),
    );
  }

  async list(projectId: string): Promise<ProjectEnvRow[]> {
    return this.byProject.all({ projectId });
  }

  async put(row: ProjectEnvRow): Promise<void> {
    const { projectEnv } = this.d.t;
    await this.d.db
      .insert(projectEnv)
      .values(row)
      .onConflictDoUpdate({
        target: [projectEnv.projectId, projectEnv.name],
        set: { value: row.value, secret: row.secret, updatedAt: row.updatedAt },
      });
  }

  async remove(projectId: string, name: string): Promise<boolean> {
    const { projectEnv } = this.d.t;
    const result = await this.d.db
      .delete(projectEnv)
      .where(and(eq(projectEnv.projectId, projectId), eq(projectEnv.name, name)));
    return this.d.changes(result) > 0;
  }
}
