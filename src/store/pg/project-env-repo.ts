/** SQL for projects' environment variables on PostgreSQL (docs/security.md "Project environment"). */
import { and, asc, eq } from 'drizzle-orm';
import type { ProjectEnvRepo } from '../repos.js';
import type { ProjectEnvRow } from '../rows.js';
import type { PgDb } from './db.js';
import { projectEnv } from './schema.js';

/** One row per project and variable name. */
export class PgProjectEnvRepo implements ProjectEnvRepo {
  /** @param db the pool's drizzle handle, or a transaction's */
  constructor(private readonly db: PgDb) {}

  async list(projectId: string): Promise<ProjectEnvRow[]> {
    return this.db.select().from(projectEnv).where(eq(projectEnv.projectId, projectId)).orderBy(asc(projectEnv.name));
  }

  async put(row: ProjectEnvRow): Promise<void> {
    await this.db
      .insert(projectEnv)
      .values(row)
      .onConflictDoUpdate({
        target: [projectEnv.projectId, projectEnv.name],
        set: { value: row.value, secret: row.secret, updatedAt: row.updatedAt },
      });
  }

  async remove(projectId: string, name: string): Promise<boolean> {
    const rows = await this.db
      .delete(projectEnv)
      .where(and(eq(projectEnv.projectId, projectId), eq(projectEnv.name, name)))
      .returning({ name: projectEnv.name });
    return rows.length > 0;
  }
}
