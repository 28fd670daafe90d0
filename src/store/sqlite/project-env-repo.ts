/** SQL for projects' environment variables on SQLite (docs/security.md "Project environment"). */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { ProjectEnvRepo } from '../repos.js';
import type { ProjectEnvRow } from '../rows.js';
import type { Db } from './db.js';
import { preparedOnce } from './prepared-once.js';
import { projectEnv } from './schema.js';

/** One row per project and variable name. */
export class SqliteProjectEnvRepo implements ProjectEnvRepo {
  /** Every session read lists the names: prepared on first use (`prepared-once.ts`). */
  private readonly byProject = preparedOnce(() =>
    this.db
      .select()
      .from(projectEnv)
      .where(eq(projectEnv.projectId, sql.placeholder('projectId')))
      .orderBy(asc(projectEnv.name))
      .prepare(),
  );

  constructor(private readonly db: Db) {}

  async list(projectId: string): Promise<ProjectEnvRow[]> {
    return this.byProject().all({ projectId });
  }

  async put(row: ProjectEnvRow): Promise<void> {
    this.db
      .insert(projectEnv)
      .values(row)
      .onConflictDoUpdate({
        target: [projectEnv.projectId, projectEnv.name],
        set: { value: row.value, secret: row.secret, updatedAt: row.updatedAt },
      })
      .run();
  }

  async remove(projectId: string, name: string): Promise<boolean> {
    return (
      this.db
        .delete(projectEnv)
        .where(and(eq(projectEnv.projectId, projectId), eq(projectEnv.name, name)))
        .run().changes > 0
    );
  }
}
