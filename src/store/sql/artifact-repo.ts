/** SQL for published previews, deployments and exports. */
import { and, asc, desc, eq, inArray, max, sql, sum } from 'drizzle-orm';
import type { ArtifactRepo } from '../repos.js';
import type { ArtifactRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes artifact rows (the files are the `ArtifactStore`'s). */
export class SqlArtifactRepo implements ArtifactRepo {
  /** The reads, built once. */
  private readonly q;

  constructor(private readonly d: Dialect) {
    this.q = statements(d);
  }

  async insert(row: ArtifactRow): Promise<void> {
    await this.d.db.insert(this.d.t.artifacts).values(row);
  }

  async findById(id: string): Promise<ArtifactRow | undefined> {
    return this.q.byId.get({ id });
  }

  /** The workflow's artifacts, oldest first, at most `limit` of them. */
  async listByWorkflow(workflowId: string, limit = 50): Promise<ArtifactRow[]> {
    // A workflow publishes a few artifacts: all are read and cut here, since SQLite sorts for a
    // bound `LIMIT ?` at twice the cost of the whole read.
    const rows = await this.q.byWorkflow.all({ workflowId });
    return rows.length > limit ? rows.slice(0, limit) : rows;
  }

  /**
   * The newest artifact of each (kind, platform) of the project, newest first: at most six rows,
   * in one statement of six indexed reads.
   */
  async latestPerPlatform(projectId: string): Promise<ArtifactRow[]> {
    const rows = await this.q.latestPerPlatform.all({ projectId });
    // The pairs' order, then the newest first (a stable sort): ties keep the pairs' order.
    rows.sort((a, b) => pairIndex(a) - pairIndex(b));
    return rows.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** Bytes of published files held by the projects of user `ownerId`. */
  async bytesUsedByOwner(ownerId: string): Promise<number> {
    const row = await this.q.bytesByOwner.get({ ownerId });
    return Number(row?.total ?? 0);
  }

  /** The project's previews of `platform` beyond the newest `keep`, oldest first (for retention). */
  async previewsBeyond(projectId: string, platform: ArtifactRow['platform'], keep: number): Promise<ArtifactRow[]> {
    const { artifacts } = this.d.t;
    // SQLite takes an OFFSET only after a LIMIT.
    const rows = await this.d.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'preview'), eq(artifacts.platform, platform)))
      .orderBy(desc(artifacts.createdAt))
      .limit(1_000_000)
      .offset(keep);
    return rows.reverse();
  }

  /** The project's newest `limit` artifacts of `kind`, newest first (the index by project, kind and time). */
  async listByKind(projectId: string, kind: ArtifactRow['kind'], limit: number): Promise<ArtifactRow[]> {
    return this.q.byKind.all({ projectId, kind, limit });
  }

  /** Deletes artifact rows by id. */
  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const { artifacts } = this.d.t;
    await this.d.db.delete(artifacts).where(inArray(artifacts.id, ids));
  }

  async latest(
    projectId: string,
    kind: ArtifactRow['kind'],
    platform: ArtifactRow['platform'],
  ): Promise<ArtifactRow | undefined> {
    return this.q.latest.get({ projectId, kind, platform });
  }

  /**
   * The deploy number of a new deployment of workflow `workflowId`: the number its other
   * deployments already have (one number per deploy, shared by its platforms), else the project's
   * next one (its `deployment_seq` counter moves; on PostgreSQL the project row stays locked until
   * the caller's transaction ends). Call it in the transaction that inserts the row.
   */
  async deployNumber(projectId: string, workflowId: string): Promise<number> {
    const { artifacts, projects } = this.d.t;
    const same = (
      await this.d.db
        .select({ n: artifacts.number })
        .from(artifacts)
        .where(and(eq(artifacts.workflowId, workflowId), eq(artifacts.kind, 'deployment')))
        .limit(1)
    )[0];
    if (same?.n != null) return same.n;
    const counter = await this.d.db
      .update(projects)
      .set({ deploymentSeq: sql`${projects.deploymentSeq} + 1` })
      .where(eq(projects.id, projectId))
      .returning({ n: projects.deploymentSeq });
    if (counter[0]) return counter[0].n;
    const highest = await this.d.db
      .select({ m: max(artifacts.number) })
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'deployment')));
    return (highest[0]?.m ?? 0) + 1;
  }
}

/** Every (kind, platform) pair, in the order `latestPerPlatform` lists equally new rows. */
const PAIRS = (['preview', 'deployment'] as const).flatMap((kind) =>
  (['web', 'ios', 'android'] as const).map((platform) => [kind, platform] as const),
);
const PAIRS_SQL = sql.raw(PAIRS.map(([kind, platform]) => `('${kind}', '${platform}')`).join(', '));

/** The place of a row's (kind, platform) in `PAIRS`. */
function pairIndex(row: ArtifactRow): number {
  return PAIRS.findIndex(([kind, platform]) => kind === row.kind && platform === row.platform);
}

/** The repository's fixed statements, their parameters as placeholders of the same names. */
function statements(d: Dialect) {
  return {
    // Per pair, the id of its newest row (the project's index by kind and time), then those rows.
    // Both dialects name the columns of a VALUES list `column1`, `column2`.
    latestPerPlatform: d.statement((db, { artifacts }) =>
      db
        .select()
        .from(artifacts)
        .where(
          sql`${artifacts.id} in (select (select b.id from artifacts b where b.project_id = ${sql.placeholder('projectId')} and b.kind = pair.column1 and b.platform = pair.column2
              order by b.created_at desc limit 1) from (values ${PAIRS_SQL}) pair)`,
        ),
    ),
    byId: d.statement((db, { artifacts }) =>
      db
        .select()
        .from(artifacts)
        .where(eq(artifacts.id, sql.placeholder('id'))),
    ),
    byWorkflow: d.statement((db, { artifacts }) =>
      db
        .select()
        .from(artifacts)
        .where(eq(artifacts.workflowId, sql.placeholder('workflowId')))
        .orderBy(asc(artifacts.createdAt)),
    ),
    latest: d.statement((db, { artifacts }) =>
      d.first(
        db
          .select()
          .from(artifacts)
          .where(
            and(
              eq(artifacts.projectId, sql.placeholder('projectId')),
              eq(artifacts.kind, sql.placeholder('kind')),
              eq(artifacts.platform, sql.placeholder('platform')),
            ),
          )
          .orderBy(desc(artifacts.createdAt)),
      ),
    ),
    // Every session read lists the checkpoints (exports): built once.
    byKind: d.statement((db, { artifacts }) =>
      db
        .select()
        .from(artifacts)
        .where(and(eq(artifacts.projectId, sql.placeholder('projectId')), eq(artifacts.kind, sql.placeholder('kind'))))
        .orderBy(desc(artifacts.createdAt))
        .limit(sql.placeholder('limit')),
    ),
    bytesByOwner: d.statement((db, { artifacts, projects }) =>
      db
        .select({ total: sum(artifacts.bytes) })
        .from(artifacts)
        .innerJoin(projects, eq(projects.id, artifacts.projectId))
        .where(eq(projects.ownerId, sql.placeholder('ownerId'))),
    ),
  };
}
