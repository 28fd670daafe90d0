/** SQL for the releases of deploy and rollback workflows (docs/releases.md). */
import { and, asc, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { preparedOnce } from './prepared-once.js';
import type { Db } from './db.js';
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
export class SqliteReleaseRepo implements ReleaseRepo {
  /** The reads of every session and of every phone's update request, prepared on first use (`prepared-once.ts`). */
  private readonly q = preparedOnce(() => prepareStatements(this.db));

  constructor(private readonly db: Db) {}

  async insert(row: ReleaseRow): Promise<void> {
    this.db.insert(releases).values(row).run();
  }

  async byWorkflow(workflowId: string): Promise<ReleaseRow | undefined> {
    return this.db.select().from(releases).where(eq(releases.workflowId, workflowId)).get();
  }

  async byNumber(projectId: string, number: number): Promise<ReleaseRow | undefined> {
    return this.db
      .select()
      .from(releases)
      .where(and(eq(releases.projectId, projectId), eq(releases.number, number)))
      .get();
  }

  async recent(projectId: string, limit: number): Promise<PublishedRelease[]> {
    return this.q().recent.all({ projectId, limit }) as PublishedRelease[];
  }

  async onChannel(projectId: string, channel: string, limit: number): Promise<PublishedRelease[]> {
    return this.q().onChannel.all({ projectId, channel, limit }) as PublishedRelease[];
  }

  async numbers(projectId: string): Promise<number[]> {
    return this.db
      .select({ n: releases.number })
      .from(releases)
      .where(and(eq(releases.projectId, projectId), isNotNull(releases.number)))
      .orderBy(asc(releases.number))
      .all()
      .map((r) => r.n!);
  }

  async update(workflowId: string, patch: Parameters<ReleaseRepo['update']>[1]): Promise<void> {
    this.db.update(releases).set(patch).where(eq(releases.workflowId, workflowId)).run();
  }
}

/** The repository's fixed statements, their parameters as placeholders of the same names. */
function prepareStatements(db: Db) {
  const projectId = sql.placeholder('projectId');
  return {
    recent: db
      .select(LISTED)
      .from(releases)
      .where(and(eq(releases.projectId, projectId), isNotNull(releases.number)))
      .orderBy(desc(releases.number))
      .limit(sql.placeholder('limit'))
      .prepare(),
    onChannel: db
      .select(LISTED)
      .from(releases)
      .where(
        and(
          eq(releases.projectId, projectId),
          eq(releases.channel, sql.placeholder('channel')),
          isNotNull(releases.number),
        ),
      )
      .orderBy(desc(releases.number))
      .limit(sql.placeholder('limit'))
      .prepare(),
  };
}
