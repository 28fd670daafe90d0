/** SQL for projects. */
import { and, count, desc, eq, gt, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import type { ProjectRepo } from '../repos.js';
import type { ReadCache } from '../read-cache.js';
import { projects } from './schema.js';
import type { ProjectRow } from '../rows.js';

/** Reads and writes projects; the only writer of the `projects` table. */
export class SqliteProjectRepo implements ProjectRepo {
  private readonly byId;
  private readonly byOwner;

  /** @param cache optional read cache of rows by id; every write below keeps it exact. */
  constructor(
    private readonly db: Db,
    private readonly cache?: ReadCache<ProjectRow>,
  ) {
    this.byId = db
      .select()
      .from(projects)
      .where(eq(projects.id, sql.placeholder('id')))
      .prepare();
    this.byOwner = db
      .select()
      .from(projects)
      .where(eq(projects.ownerId, sql.placeholder('ownerId')))
      .orderBy(desc(projects.createdAt), desc(sql`rowid`))
      .prepare();
  }

  /** The row (shared with the cache: callers must not mutate it). */
  async findById(id: string): Promise<ProjectRow | undefined> {
    const cached = this.cache?.get(id);
    if (cached) return cached;
    const row = this.byId.get({ id });
    if (row) this.cache?.set(id, row);
    return row;
  }

  /** The owner's projects, newest first (docs/contract.md#tools). */
  async listByOwner(ownerId: string): Promise<ProjectRow[]> {
    return this.byOwner.all({ ownerId });
  }

  async countByOwner(ownerId: string): Promise<number> {
    return this.db.select({ n: count() }).from(projects).where(eq(projects.ownerId, ownerId)).get()?.n ?? 0;
  }

  /** Projects the owner created strictly after `since` (ISO timestamp), and the oldest of them. */
  async createdSince(ownerId: string, since: string): Promise<{ n: number; oldest: string | null }> {
    const row = this.db
      .select({ n: count(), oldest: sql<string | null>`min(${projects.createdAt})` })
      .from(projects)
      .where(and(eq(projects.ownerId, ownerId), gt(projects.createdAt, since)))
      .get();
    return { n: row?.n ?? 0, oldest: row?.oldest ?? null };
  }

  async insert(row: ProjectRow): Promise<void> {
    this.db.insert(projects).values(row).run();
  }

  async touch(id: string, at: string): Promise<void> {
    this.cache?.delete(id);
    this.db.update(projects).set({ updatedAt: at }).where(eq(projects.id, id)).run();
  }

  /** A workflow of the project completed: its workspace moves to the next version. @returns that version. */
  async completeWorkspace(id: string, at: string): Promise<number> {
    this.cache?.delete(id);
    const row = this.db
      .update(projects)
      .set({ updatedAt: at, workspaceVersion: sql`${projects.workspaceVersion} + 1` })
      .where(eq(projects.id, id))
      .returning({ version: projects.workspaceVersion })
      .get();
    return row?.version ?? 0;
  }
}
