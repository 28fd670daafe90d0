/** SQL for published previews and deployments, on PostgreSQL (the twin of `sqlite/artifact-repo.ts`). */
import { and, asc, desc, eq, inArray, max, sql, sum } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { ArtifactRepo } from '../repos.js';
import type { ArtifactRow } from '../rows.js';
import { artifacts, projects } from './schema.js';

/** Reads and writes artifact rows (the files are the `ArtifactStore`'s). */
export class PgArtifactRepo implements ArtifactRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  async insert(row: ArtifactRow): Promise<void> {
    await this.db.insert(artifacts).values(row);
  }

  async findById(id: string): Promise<ArtifactRow | undefined> {
    return (await this.db.select().from(artifacts).where(eq(artifacts.id, id)))[0];
  }

  /** The workflow's artifacts, oldest first, at most `limit` of them. */
  async listByWorkflow(workflowId: string, limit = 50): Promise<ArtifactRow[]> {
    return this.db
      .select()
      .from(artifacts)
      .where(eq(artifacts.workflowId, workflowId))
      .orderBy(asc(artifacts.createdAt))
      .limit(limit);
  }

  /** The newest artifact of each (kind, platform) of the project: at most six rows, one indexed read each. */
  async latestPerPlatform(projectId: string): Promise<ArtifactRow[]> {
    const rows: ArtifactRow[] = [];
    for (const kind of ['preview', 'deployment'] as const) {
      for (const platform of ['web', 'ios', 'android'] as const) {
        const row = await this.latest(projectId, kind, platform);
        if (row) rows.push(row);
      }
    }
    return rows.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** Bytes of published files held by the projects of user `ownerId`. */
  async bytesUsedByOwner(ownerId: string): Promise<number> {
    const rows = await this.db
      .select({ total: sum(artifacts.bytes) })
      .from(artifacts)
      .innerJoin(projects, eq(projects.id, artifacts.projectId))
      .where(eq(projects.ownerId, ownerId));
    return Number(rows[0]?.total ?? 0);
  }

  /** The project's newest `limit` artifacts of `kind`, newest first. */
  async listByKind(projectId: string, kind: ArtifactRow['kind'], limit: number): Promise<ArtifactRow[]> {
    return this.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, kind)))
      .orderBy(desc(artifacts.createdAt))
      .limit(limit);
  }

  /** The project's previews of `platform` beyond the newest `keep`, oldest first (for retention). */
  async previewsBeyond(projectId: string, platform: ArtifactRow['platform'], keep: number): Promise<ArtifactRow[]> {
    const rows = await this.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'preview'), eq(artifacts.platform, platform)))
      .orderBy(desc(artifacts.createdAt))
      .offset(keep);
    return rows.reverse();
  }

  /** Deletes artifact rows by id. */
  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.delete(artifacts).where(inArray(artifacts.id, ids));
  }

  async latest(
    projectId: string,
    kind: ArtifactRow['kind'],
    platform: ArtifactRow['platform'],
  ): Promise<ArtifactRow | undefined> {
    const rows = await this.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, kind), eq(artifacts.platform, platform)))
      .orderBy(desc(artifacts.createdAt))
      .limit(1);
    return rows[0];
  }

  /**
   * The deploy number of a new deployment of workflow `workflowId`: the number its other
   * deployments already have (one number per deploy, shared by its platforms), else the project's
   * next one (its `deployment_seq` counter moves, and the project row stays locked until the
   * caller's transaction ends). Call it in the transaction that inserts the row.
   */
  async deployNumber(projectId: string, workflowId: string): Promise<number> {
    const same = (
      await this.db
        .select({ n: artifacts.number })
        .from(artifacts)
        .where(and(eq(artifacts.workflowId, workflowId), eq(artifacts.kind, 'deployment')))
        .limit(1)
    )[0];
    if (same?.n != null) return same.n;
    const counter = await this.db
      .update(projects)
      .set({ deploymentSeq: sql`${projects.deploymentSeq} + 1` })
      .where(eq(projects.id, projectId))
      .returning({ n: projects.deploymentSeq });
    if (counter[0]) return counter[0].n;
    const highest = await this.db
      .select({ m: max(artifacts.number) })
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'deployment')));
    return (highest[0]?.m ?? 0) + 1;
  }
}
