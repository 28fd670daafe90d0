/** SQL for projects, on PostgreSQL (the twin of `sqlite/project-repo.ts`). */
import { and, count, desc, eq, gt, sql } from 'drizzle-orm';
import type { PgDb } from './db.js';
import type { ProjectRepo } from '../repos.js';
import type { ReadCache } from '../read-cache.js';
import type { ProjectRow } from '../rows.js';
import { projects } from './schema.js';

/** Reads and writes projects; the only writer of the `projects` table. */
export class PgProjectRepo implements ProjectRepo {
  /**
   * @param db the pool's handle (auto-commit statements) or a transaction's.
   * @param cache optional read cache of rows by id, shared by the pool's and every transaction's
   *   repository; writes below drop their entry (name, visibility and owner never change).
   */
  constructor(
    private readonly db: PgDb,
    private readonly cache?: ReadCache<ProjectRow>,
  ) {}

  /** The row (shared with the cache: callers must not mutate it). */
  async findById(id: string): Promise<ProjectRow | undefined> {
    const cached = this.cache?.get(id);
    if (cached) return cached;
    const row = (await this.db.select().from(projects).where(eq(projects.id, id)))[0];
    if (row) this.cache?.set(id, row);
    return row;
  }

  /**
   * The owner's projects, newest first (docs/contract.md#tools); ties (same `createdAt`) newest
   * insert first, as SQLite's `rowid` order: PostgreSQL has no insertion order, so ties fall back
   * to the id, descending.
   */
  async listByOwner(ownerId: string): Promise<ProjectRow[]> {
    return this.db
      .select()
      .from(projects)
      .where(eq(projects.ownerId, ownerId))
      .orderBy(desc(projects.createdAt), desc(projects.id));
  }

  async countByOwner(ownerId: string): Promise<number> {
    return (await this.db.select({ n: count() }).from(projects).where(eq(projects.ownerId, ownerId)))[0]?.n ?? 0;
  }

  /** Projects the owner created strictly after `since` (ISO timestamp), and the oldest of them. */
  async createdSince(ownerId: string, since: string): Promise<{ n: number; oldest: string | null }> {
    const row = (
      await this.db
        .select({ n: count(), oldest: sql<string | null>`min(${projects.createdAt})` })
        .from(projects)
        .where(and(eq(projects.ownerId, ownerId), gt(projects.createdAt, since)))
    )[0];
    return { n: row?.n ?? 0, oldest: row?.oldest ?? null };
  }

  async insert(row: ProjectRow): Promise<void> {
    await this.db.insert(projects).values(row);
  }

  async touch(id: string, at: string): Promise<void> {
    this.cache?.delete(id);
    await this.db.update(projects).set({ updatedAt: at }).where(eq(projects.id, id));
  }

  /** A workflow of the project completed: its workspace moves to the next version (one statement, the row locked). @returns that version. */
  async completeWorkspace(id: string, at: string): Promise<number> {
    this.cache?.delete(id);
    const rows = await this.db
      .update(projects)
      .set({ updatedAt: at, workspaceVersion: sql`${projects.workspaceVersion} + 1` })
      .where(eq(projects.id, id))
      .returning({ version: projects.workspaceVersion });
    return rows[0]?.version ?? 0;
  }
}
