/** SQL for projects. */
import { and, count, desc, eq, gt, sql } from 'drizzle-orm';
import type { ProjectRepo } from '../repos.js';
import type { ReadCache } from '../read-cache.js';
import type { ProjectRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** Reads and writes projects; the only writer of the `projects` table. */
export class SqlProjectRepo implements ProjectRepo {
  private readonly byId;
  private readonly byOwner;

  /**
   * @param cache optional read cache of rows by id, shared by the store's and every transaction's
   *   repository; writes below drop their entry (name, visibility and owner never change).
   */
  constructor(
    private readonly d: Dialect,
    private readonly cache?: ReadCache<ProjectRow>,
  ) {
    this.byId = d.statement((db, { projects }) =>
      db
        .select()
        .from(projects)
        .where(eq(projects.id, sql.placeholder('id'))),
    );
    // Ties (same `createdAt`): the later insert first.
    this.byOwner = d.statement((db, { projects }) =>
      db
        .select()
        .from(projects)
        .where(eq(projects.ownerId, sql.placeholder('ownerId')))
        .orderBy(desc(projects.createdAt), d.laterFirst(projects.id)),
    );
  }

  /**
   * The row (shared with the cache: callers must not mutate it). A row read while the cache
   * dropped something (a write of this process, a change notice) is not kept: it may be older than
   * that change.
   */
  async findById(id: string): Promise<ProjectRow | undefined> {
    const cached = this.cache?.get(id);
    if (cached) return cached;
    const seen = this.cache?.dropped();
    const row = await this.byId.get({ id });
    if (row && this.cache?.generation() === seen) this.cache!.set(id, row);
    return row;
  }

  /** The owner's projects, newest first (docs/contract.md#tools). */
  async listByOwner(ownerId: string): Promise<ProjectRow[]> {
    return this.byOwner.all({ ownerId });
  }

  async countByOwner(ownerId: string): Promise<number> {
    const { projects } = this.d.t;
    return (await this.d.db.select({ n: count() }).from(projects).where(eq(projects.ownerId, ownerId)))[0]?.n ?? 0;
  }

  /** Projects the owner created strictly after `since` (ISO timestamp), and the oldest of them. */
  async createdSince(ownerId: string, since: string): Promise<{ n: number; oldest: string | null }> {
    const { projects } = this.d.t;
    const row = (
      await this.d.db
        .select({ n: count(), oldest: sql<string | null>`min(${projects.createdAt})` })
        .from(projects)
        .where(and(eq(projects.ownerId, ownerId), gt(projects.createdAt, since)))
    )[0];
    return { n: row?.n ?? 0, oldest: row?.oldest ?? null };
  }

  async insert(row: ProjectRow): Promise<void> {
    await this.d.db.insert(this.d.t.projects).values(row);
  }

  async touch(id: string, at: string): Promise<void> {
    const { projects } = this.d.t;
    this.cache?.delete(id);
    await this.d.db.update(projects).set({ updatedAt: at }).where(eq(projects.id, id));
  }

  /** A workflow of the project completed: its workspace moves to the next version (one statement, the row locked). @returns that version. */
  async completeWorkspace(id: string, at: string): Promise<number> {
    const { projects } = this.d.t;
    this.cache?.delete(id);
    const rows = await this.d.db
      .update(projects)
      .set({ updatedAt: at, workspaceVersion: sql`${projects.workspaceVersion} + 1` })
      .where(eq(projects.id, id))
      .returning({ version: projects.workspaceVersion });
    return rows[0]?.version ?? 0;
  }
}
