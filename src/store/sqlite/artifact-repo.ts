/** SQL for published previews and deployments. */
import { and, asc, desc, eq, max, sql, sum } from 'drizzle-orm';
import type { Db } from './db.js';
import { preparedOnce } from './prepared-once.js';
import type { ArtifactRepo } from '../repos.js';
import { artifacts, projects } from './schema.js';
import type { ArtifactRow } from '../rows.js';

/** Reads and writes artifact rows (the files are the `ArtifactStore`'s). */
export class SqliteArtifactRepo implements ArtifactRepo {
  /** The reads, prepared on first use (`prepared-once.ts`). */
  private readonly q = preparedOnce(() => prepareStatements(this.db));

  constructor(private readonly db: Db) {}

  async insert(row: ArtifactRow): Promise<void> {
    this.db.insert(artifacts).values(row).run();
  }

  async findById(id: string): Promise<ArtifactRow | undefined> {
    return this.q().byId.get({ id });
  }

  /** The workflow's artifacts, oldest first, at most `limit` of them. */
  async listByWorkflow(workflowId: string, limit = 50): Promise<ArtifactRow[]> {
    // A workflow publishes a few artifacts: all are read and cut here, since SQLite sorts for a
    // bound `LIMIT ?` at twice the cost of the whole read.
    const rows = this.q().byWorkflow.all({ workflowId });
    return rows.length > limit ? rows.slice(0, limit) : rows;
  }

  /**
   * The newest artifact of each (kind, platform) of the project, newest first: at most six rows,
   * in one statement of six indexed reads.
   */
  async latestPerPlatform(projectId: string): Promise<ArtifactRow[]> {
    const rows = this.q().latestPerPlatform.all({ projectId });
    // The pairs' order, then the newest first (a stable sort): ties keep the pairs' order.
    rows.sort((a, b) => pairIndex(a) - pairIndex(b));
    return rows.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** Bytes of published files held by the projects of user `ownerId`. */
  async bytesUsedByOwner(ownerId: string): Promise<number> {
    const row = this.q().bytesByOwner.get({ ownerId });
    return Number(row?.total ?? 0);
  }

  /** The project's previews of `platform` beyond the newest `keep`, oldest first (for retention). */
  async previewsBeyond(projectId: string, platform: ArtifactRow['platform'], keep: number): Promise<ArtifactRow[]> {
    return this.db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'preview'), eq(artifacts.platform, platform)))
      .orderBy(desc(artifacts.createdAt))
      .limit(1_000_000)
      .offset(keep)
      .all()
      .reverse();
  }

  /** The project's newest `limit` artifacts of `kind`, newest first (the index by project, kind and time). */
  async listByKind(projectId: string, kind: ArtifactRow['kind'], limit: number): Promise<ArtifactRow[]> {
    return this.q().byKind.all({ projectId, kind, limit });
  }

  /** Deletes artifact rows by id. */
  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    this.db
      .delete(artifacts)
      .where(sql`${artifacts.id} in ${ids}`)
      .run();
  }

  async latest(
    projectId: string,
    kind: ArtifactRow['kind'],
    platform: ArtifactRow['platform'],
  ): Promise<ArtifactRow | undefined> {
    return this.q().latest.get({ projectId, kind, platform });
  }

  /**
   * The deploy number of a new deployment of workflow `workflowId`: the number its other
   * deployments already have (one number per deploy, shared by its platforms), else the project's
   * next one (its `deployment_seq` counter moves). Call it in the transaction that inserts the row.
   */
  async deployNumber(projectId: string, workflowId: string): Promise<number> {
    const same = this.db
      .select({ n: artifacts.number })
      .from(artifacts)
      .where(and(eq(artifacts.workflowId, workflowId), eq(artifacts.kind, 'deployment')))
      .get();
    if (same?.n != null) return same.n;
    const counter = this.db
      .update(projects)
      .set({ deploymentSeq: sql`${projects.deploymentSeq} + 1` })
      .where(eq(projects.id, projectId))
      .returning({ n: projects.deploymentSeq })
      .get();
    if (counter) return counter.n;
    return (
      (this.db
        .select({ m: max(artifacts.number) })
        .from(artifacts)
        .where(and(eq(artifacts.projectId, projectId), eq(artifacts.kind, 'deployment')))
        .get()?.m ?? 0) + 1
    );
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
function prepareStatements(db: Db) {
  return {
    // Per pair, the id of its newest row (the project's index by kind and time), then those rows.
    latestPerPlatform: db
      .select()
      .from(artifacts)
      .where(
        sql`${artifacts.id} in (select (select b.id from artifacts b where b.project_id = ${sql.placeholder('projectId')} and b.kind = pair.column1 and b.platform = pair.column2
              order by b.created_at desc limit 1) from (values ${PAIRS_SQL}) pair)`,
      )
      .prepare(),
    byId: db
      .select()
      .from(artifacts)
      .where(eq(artifacts.id, sql.placeholder('id')))
      .prepare(),
    byWorkflow: db
      .select()
      .from(artifacts)
      .where(eq(artifacts.workflowId, sql.placeholder('workflowId')))
      .orderBy(asc(artifacts.createdAt))
      .prepare(),
    latest: db
      .select()
      .from(artifacts)
      .where(
        and(
          eq(artifacts.projectId, sql.placeholder('projectId')),
          eq(artifacts.kind, sql.placeholder('kind')),
          eq(artifacts.platform, sql.placeholder('platform')),
        ),
      )
      .orderBy(desc(artifacts.createdAt))
      .prepare(),
    // Every session read lists the checkpoints (exports): prepared once.
    byKind: db
      .select()
      .from(artifacts)
      .where(and(eq(artifacts.projectId, sql.placeholder('projectId')), eq(artifacts.kind, sql.placeholder('kind'))))
      .orderBy(desc(artifacts.createdAt))
      .limit(sql.placeholder('limit'))
      .prepare(),
    bytesByOwner: db
      .select({ total: sum(artifacts.bytes) })
      .from(artifacts)
      .innerJoin(projects, eq(projects.id, artifacts.projectId))
      .where(eq(projects.ownerId, sql.placeholder('ownerId')))
      .prepare(),
  };
}
