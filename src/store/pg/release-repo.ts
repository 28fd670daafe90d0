/** SQL for the releases of deploy and rollback workflows on PostgreSQL (the twin of `sqlite/release-repo.ts`). */
import { and, asc, desc, eq, isNotNull } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { ReleaseRepo } from '../release-repo.js';
import type { PublishedRelease, ReleaseRow } from '../rows.js';
import { releases } from './release-schema.js';

/** Every column but the source snapshot (what lists read). */
const LISTED = {
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

/** Reads and writes release rows. */
export class PgReleaseRepo implements ReleaseRepo {
  constructor(private readonly db: PgDb) {}

  async insert(row: ReleaseRow): Promise<void> {
    await this.db.insert(releases).values(row);
  }

  async byWorkflow(workflowId: string): Promise<ReleaseRow | undefined> {
    return (await this.db.select().from(releases).where(eq(releases.workflowId, workflowId)))[0];
  }

  async byNumber(projectId: string, number: number): Promise<ReleaseRow | undefined> {
    return (
      await this.db
        .select()
        .from(releases)
        .where(and(eq(releases.projectId, projectId), eq(releases.number, number)))
    )[0];
  }

  async recent(projectId: string, limit: number): Promise<PublishedRelease[]> {
    return (await this.db
      .select(LISTED)
      .from(releases)
      .where(and(eq(releases.projectId, projectId), isNotNull(releases.number)))
      .orderBy(desc(releases.number))
      .limit(limit)) as PublishedRelease[];
  }

  async onChannel(projectId: string, channel: string, limit: number): Promise<PublishedRelease[]> {
    return (await this.db
      .select(LISTED)
      .from(releases)
      .where(and(eq(releases.projectId, projectId), eq(releases.channel, channel), isNotNull(releases.number)))
      .orderBy(desc(releases.number))
      .limit(limit)) as PublishedRelease[];
  }

  async numbers(projectId: string): Promise<number[]> {
    const rows = await this.db
      .select({ n: releases.number })
      .from(releases)
      .where(and(eq(releases.projectId, projectId), isNotNull(releases.number)))
      .orderBy(asc(releases.number));
    return rows.map((r) => r.n!);
  }

  async update(workflowId: string, patch: Parameters<ReleaseRepo['update']>[1]): Promise<void> {
    await this.db.update(releases).set(patch).where(eq(releases.workflowId, workflowId));
  }
}
