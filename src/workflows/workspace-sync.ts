/**
 * Workspace snapshots (docs/postgresql.md#workspace-snapshots): with several build workers on one
 * PostgreSQL database, the next workflow of a project may run on another worker, so a worker's
 * `<dataDir>/workspaces/<project>/` is only a cache of the project's last completed state.
 *
 * - After a `completed` run, before it is recorded: the workspace, without `node_modules`,
 *   `.expo` and `.svc` (Expo's git history is kept), is packed as tar.gz into a blob, and the
 *   completion's transaction records it as the project's snapshot at the new workspace version;
 *   the blob it replaces is removed after COMMIT. A workspace over the size limit is not
 *   snapshotted: the run completes and a system message says so.
 * - After a claim, before the builder runs: when the local copy is older than the snapshot (or its
 *   version is unknown), the folder is replaced by the snapshot.
 *
 * The local copy's version is kept beside the folder (`<project>.version`), not in it, so a build
 * can neither change nor commit it. It is removed while a run works on the folder and written
 * again only when that run completes: after a failed, cancelled or killed run the copy counts as
 * unknown and the next run restores the last completed state, never the half-written files.
 * Failed and cancelled runs take no snapshot.
 */
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BuildFailure } from '../builders/builder.js';
import { packFolder, unpackInto } from '../io/folder-archive.js';
import type { Logger } from '../logger.js';
import type { BlobStore, StoredBlob } from '../store/blob-store.js';
import type { WorkspaceRepo } from '../store/repos.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';
import type { WorkflowJournal } from './workflow-journal.js';

/** The default limit of a workspace snapshot (`--workspace-snapshot-max-mb`), in MiB. */
const DEFAULT_WORKSPACE_SNAPSHOT_MAX_MB = 200;

/** Names left out of a snapshot at the workspace's top level: rebuilt or relinked by the builder. */
const TOP_LEVEL_SKIPPED = new Set(['.expo', '.svc']);

/** What runs inside the completion's transaction, with the project's new workspace version. */
export type CompletionHook = (tx: Tx, workspaceVersion: number) => Promise<void>;

/** What workspace snapshots work with. */
export interface WorkspaceSyncDeps {
  blobs: BlobStore;
  /** The snapshots' table, read outside transactions (`store.repos.workspaces`). */
  workspaces: WorkspaceRepo;
  journal: WorkflowJournal;
  logger: Logger;
  /** Largest workspace snapshotted, in MiB of files (default `DEFAULT_WORKSPACE_SNAPSHOT_MAX_MB`). */
  maxMb?: number;
}

/** Snapshot after completion, restore after a claim (see the file comment). */
export class WorkspaceSync {
  private readonly maxBytes: number;

  constructor(private readonly deps: WorkspaceSyncDeps) {
    this.maxBytes = (deps.maxMb ?? DEFAULT_WORKSPACE_SNAPSHOT_MAX_MB) * 1024 * 1024;
  }

  /**
   * Removes the half-unpacked and replaced folders a killed process left in `workspacesDir`
   * (`.restore-*`, `.replaced-*`). Call at start. @returns how many.
   */
  async removeTemporary(workspacesDir: string): Promise<number> {
    const names = await readdir(workspacesDir).catch(() => [] as string[]);
    const stale = names.filter((name) => name.startsWith('.restore-') || name.startsWith('.replaced-'));
    await Promise.all(stale.map((name) => rm(join(workspacesDir, name), { recursive: true, force: true })));
    return stale.length;
  }

  /**
   * After a claim, before the builder runs: replaces `workspaceDir` with the project's snapshot
   * when the local copy is older or of unknown version, then marks the copy as in use.
   * @param say posts a progress message (the restore, and a snapshot older than the last completion)
   * @throws BuildFailure `workspace_restore_failed` when the snapshot cannot be fetched or unpacked
   *   (the local folder is left as it was).
   */
  async restore(projectId: string, workspaceDir: string, say: (text: string) => Promise<void>): Promise<void> {
    const local = await readVersion(versionFileOf(workspaceDir));
    const snapshot = await this.deps.workspaces.snapshotOf(projectId);
    // In use from here on: only a completion writes a version again.
    await rm(versionFileOf(workspaceDir), { force: true });
    if (!snapshot || (local !== null && local >= snapshot.version)) return;
    const tmp = join(dirname(workspaceDir), `.restore-${basename(workspaceDir)}-${randomUUID()}`);
    const old = join(dirname(workspaceDir), `.replaced-${basename(workspaceDir)}-${randomUUID()}`);
    try {
      await mkdir(tmp, { recursive: true });
      await unpackInto(await this.deps.blobs.get(snapshot.blobId), tmp, ['file', 'folder', 'link']);
      await rename(workspaceDir, old).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      await rename(tmp, workspaceDir);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      this.deps.logger.error({ err: error, projectId }, 'could not restore a workspace snapshot');
      throw new BuildFailure(
        'workspace_restore_failed',
        "The workspace of the project's last completed workflow could not be fetched from the database. Send the instruction again to retry.",
      );
    }
    await rm(old, { recursive: true, force: true });
    await say(
      `Restored the workspace of the project's last completed workflow (version ${snapshot.version}) on this worker.`,
    );
  }

  /**
   * Records a completed run with its snapshot: packs `workspaceDir` into a blob (unless it is over
   * the limit), then calls `record` with the hook its completion transaction runs; removes the
   * replaced blob after COMMIT (or the new one when `record` did not complete the run).
   * @param record the completion's transition; it calls the hook inside its transaction when it
   *   completes the run, and resolves true then.
   * A snapshot that cannot be uploaded is reported in a system message instead, like one over the limit.
   * @returns what `record` returns.
   * @throws what `record` throws (a packed blob is removed first).
   */
  async complete(
    workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
    workspaceDir: string,
    record: (hook: CompletionHook) => Promise<boolean>,
  ): Promise<boolean> {
    const { blobs, journal, logger } = this.deps;
    const size = await snapshotBytes(workspaceDir);
    let blob: StoredBlob | null = null;
    let note: string | null = null;
    if (size > this.maxBytes) {
      const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
      note = `The workspace (${mib(size)} MiB without node_modules) is over the ${mib(this.maxBytes)} MiB snapshot limit: it was not saved to the database, so a later workflow on another worker starts from the last workspace that was saved.`;
    } else {
      const packed = packFolder(workspaceDir, { skip: skipped });
      try {
        blob = await blobs.put(packed);
      } catch (error) {
        packed.destroy();
        // The run completed: it is recorded without a snapshot rather than left to its lease.
        logger.warn({ err: error, projectId: workflow.projectId }, 'could not save a workspace snapshot');
        note =
          'The workspace could not be saved to the database: a later workflow on another worker starts from the last workspace that was saved.';
      }
    }
    let version = 0;
    let replaced: string | null = null;
    let moved = false;
    try {
      moved = await record(async (tx, workspaceVersion) => {
        version = workspaceVersion;
        if (blob) {
          if (!tx.workspaces) throw new Error('This store keeps no workspace snapshots');
          replaced = await tx.workspaces.saveSnapshot(workflow.projectId, workspaceVersion, blob.id, blob.bytes);
        }
        if (note)
          await journal.post(workflow.projectId, workflow.id, { role: 'system', type: 'status', content: note }, tx);
      });
    } finally {
      if (!moved && blob)
        await blobs
          .remove(blob.id)
          .catch((error: unknown) =>
            logger.warn({ err: error, blobId: blob?.id }, 'could not remove an unrecorded workspace snapshot'),
          );
    }
    if (!moved) return false;
    await writeVersion(versionFileOf(workspaceDir), version);
    if (replaced)
      await blobs
        .remove(replaced)
        .catch((error: unknown) =>
          logger.warn({ err: error, blobId: replaced }, 'could not remove a replaced workspace snapshot'),
        );
    return true;
  }
}

/** `<workspaces>/<project>.version`: the version of the local copy (see the file comment). */
function versionFileOf(workspaceDir: string): string {
  return `${workspaceDir}.version`;
}

async function readVersion(file: string): Promise<number | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  const version = text === null ? NaN : Number(text.trim());
  return Number.isSafeInteger(version) && version >= 0 ? version : null;
}

async function writeVersion(file: string, version: number): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, `${version}\n`);
  await rename(tmp, file);
}

/** True for what a snapshot leaves out: `node_modules` anywhere, `.expo` and `.svc` at the top, and anything but files, folders and links. */
function skipped(path: string, stats: Stats): boolean {
  const parts = path.split('/');
  if (parts.includes('node_modules') || (parts.length === 1 && TOP_LEVEL_SKIPPED.has(parts[0]!))) return true;
  return !(stats.isFile() || stats.isDirectory() || stats.isSymbolicLink());
}

/** Bytes of the files a snapshot of `dir` would hold. */
async function snapshotBytes(dir: string): Promise<number> {
  let bytes = 0;
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const path = prefix ? `${prefix}/${name}` : name;
      const stats = await lstat(join(folder, name)).catch(() => null);
      if (!stats || skipped(path, stats)) continue;
      if (stats.isDirectory()) await walk(join(folder, name), path);
      else if (stats.isFile()) bytes += stats.size;
    }
  };
  await walk(dir, '');
  return bytes;
}
