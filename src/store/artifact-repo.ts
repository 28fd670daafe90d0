/** SQL for published previews and deployments. */
import { and, asc, desc, eq, max } from 'drizzle-orm';
import type { Db } from './database.js';
import { artifacts, type ArtifactRow } from './schema.js';

/** Reads and writes artifact rows (the files are the `ArtifactStore`'s). */
export class ArtifactRepo {
  constructor(private readonly db: Db) {}

  insert(row: ArtifactRow): void {
    this.db.insert(artifacts).values(row).run();
  }

  findById(id: string): ArtifactRow | undefined {
    return this.db.select().from(artifacts).where(eq(artifacts.id, id)).get();
  }

  listByWorkflow(workflowId: string): ArtifactRow[] {
    return this.db.select().from(artifacts).where(eq(artifacts.workflowId, workflowId)).orderBy(asc(artifacts.createdAt)).all();
  }

  /** The newest artifact of each (kind, platform) of the project. */
  latestPerPlatform(projectId: string): ArtifactRow[] {
    const rows = this.db.select().from(artifacts).where(eq(artifacts.projectId, projectId)).orderBy(desc(artifacts.createdAt), desc(artifacts.number)).all();
    const seen = new Set<string>();
    return rows.filter((r) => {
      const key = `${r.kind}/${r.platform}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  latest(projectId: string, kind: ArtifactRow['kind'], platform: ArtifactRow['platform']): ArtifactRow | undefined {
    return this.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, kind), eq(artifacts.platform, platform)))
      .orderBy(desc(artifacts.createdAt))
      .get();
  }

  nextDeploymentNumber(projectId: string): number {
    return (
      (this.db
        .select({ m: max(artifacts.number) })
        .from(artifacts)
        .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'deployment')))
        .get()?.m ?? 0) + 1
    );
  }
}
