/** SQL for the releases of deploy and rollback workflows (docs/releases.md). */
import { and, asc, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type { ReleaseRepo } from '../release-repo.js';
import type { PublishedRelease, ReleaseRow } from '../rows.js';
import type { Dialect, Tables } from './dialect.js';

/** Every column but the source snapshot (what lists read). */
function listed({ releases }: Tables) {
  return {
    workflowId: releases.workflowId,
    projectId: releases.projectId,
    channel: releases.channel,
    rolloutPercent: releases.rolloutPercent,
    rollbackOf: releases.rollbackOf,
    number: releases.number,
    previousNumber: releases.previousNumber,
    platforms: releases.platforms,
    sdks: releases.sdks,
    changes: releases.changes,
    createdAt: releases.createdAt,
  };
}

/** Reads and writes release rows. */
export class SqlReleaseRepo implements ReleaseRepo {
  /** The reads of every session and of every phone's update request, built once. */
  private readonly q;

  constructor(private readonly d: Dialect) {
    const projectId = sql.placeholder('projectId');
    this.q = {
      recent: d.statement((db, t) =>
        db
          .select(listed(t))
          .from(t.releases)
          .where(and(eq(t.releases.projectId, projectId), isNotNull(t.releases.number)))
          .orderBy(desc(t.releases.number))
          .limit(sql.placeholder('limit')),
      ),
      onChannel: d.statement((db, t) =>
        db
          .select(listed(t))
          .from(t.releases)
          .where(
            and(
              eq(t.releases.projectId, projectId),
              eq(t.releases.channel, sql.placeholder('channel')),
              isNotNull(t.releases.number),
            ),
          )
          .orderBy(desc(t.releases.number))
          .limit(sql.placeholder('limit')),
      ),
    };
  }

  async insert(row: ReleaseRow): Promise<void> {
    await this.d.db.insert(this.d.t.releases).values(row);
  }

  async byWorkflow(workflowId: string): Promise<ReleaseRow | undefined> {
    const { releases } = this.d.t;
    return (await this.d.db.select().from(releases).where(eq(releases.workflowId, workflowId)))[0];
  }

  async byNumber(projectId: string, number: number): Promise<ReleaseRow | undefined> {
    const { releases } = this.d.t;
    return (
      await this.d.db
        .select()
        .from(releases)
        .where(and(eq(releases.projectId, projectId), eq(releases.number, number)))
    )[0];
  }

  async recent(projectId: string, limit: number): Promise<PublishedRelease[]> {
    return (await this.q.recent.all({ projectId, limit })) as PublishedRelease[];
  }

  async onChannel(projectId: string, channel: string, limit: number): Promise<PublishedRelease[]> {
    return (await this.q.onChannel.all({ projectId, channel, limit })) as PublishedRelease[];
  }

  async numbers(projectId: string): Promise<number[]> {
    const { releases } = this.d.t;
    const rows = await this.d.db
      .select({ n: releases.number })
      .from(releases)
      .where(and(eq(releases.projectId, projectId), isNotNull(releases.number)))
      .orderBy(asc(releases.number));
    return rows.map((r) => r.n!);
  }

  async update(workflowId: string, patch: Parameters<ReleaseRepo['update']>[1]): Promise<void> {
    const { releases } = this.d.t;
    await this.d.db.update(releases).set(patch).where(eq(releases.workflowId, workflowId));
  }
}
