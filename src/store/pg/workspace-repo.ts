/** SQL for workspace snapshots on PostgreSQL (docs/postgresql.md#workspace-snapshots). */
import { eq, sql } from 'drizzle-orm';
import type { WorkspaceRepo, WorkspaceSnapshotRef } from '../repos.js';
import type { PgDb } from './db.js';
import { workspaceSnapshots } from './schema.js';

/** One snapshot per project: its last completed workspace, as a blob. */
export class PgWorkspaceRepo implements WorkspaceRepo {
  /** @param db the pool's drizzle handle, or a transaction's (`saveSnapshot` belongs in the completion's) */
  constructor(private readonly db: PgDb) {}

  async snapshotOf(projectId: string): Promise<WorkspaceSnapshotRef | null> {
    const rows = await this.db
      .select({ version: workspaceSnapshots.version, blobId: workspaceSnapshots.blobId })
      .from(workspaceSnapshots)
      .where(eq(workspaceSnapshots.projectId, projectId));
    return rows[0] ?? null;
  }

  async saveSnapshot(projectId: string, version: number, blobId: string, bytes: number): Promise<string | null> {
    // The old row is locked and read first, so the blob it named is known when it is replaced.
    const old = await this.db
      .select({ blobId: workspaceSnapshots.blobId })
      .from(workspaceSnapshots)
      .where(eq(workspaceSnapshots.projectId, projectId))
      .for('update');
    await this.db
      .insert(workspaceSnapshots)
      .values({ projectId, version, blobId, bytes, createdAt: new Date().toISOString() })
      .onConflictDoUpdate({
        target: workspaceSnapshots.projectId,
        set: { version, blobId, bytes, createdAt: sql`excluded.created_at` },
      });
    const replaced = old[0]?.blobId ?? null;
    return replaced === blobId ? null : replaced;
  }
}
