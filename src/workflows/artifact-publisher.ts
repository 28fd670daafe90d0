/**
 * Publishing a builder's artifacts (docs/builders.md "Previews and deployments"): copies the files into the
 * artifact store (a folder, or a blob uploaded before the transaction, docs/postgresql.md#artifacts) within the owner's storage quota (the plan's `artifactStorageMb`, which the
 * owner's artifacts and project workspaces share), records the
 * row with its size, and applies retention: only the newest previews of each platform of a project
 * are kept (deployments are kept for ever, being immutable).
 */
import { randomUUID } from 'node:crypto';
import { BuildFailure, type PublishedArtifact, type PublishRequest } from '../builders/builder.js';
import { isoNow, type Clock } from '../clock.js';
import { limitsFor, type PlanTable } from '../limits/plans.js';
import type { Logger } from '../logger.js';
import type { ArtifactRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import { join } from 'node:path';
import { folderBytes } from '../io/folder-size.js';
import {
  ArtifactNotFoundError,
  ArtifactTooLargeError,
  artifactPath,
  type ArtifactStore,
  type ImportedFolder,
} from './artifact-store.js';

/** Artifact storage of a plan that names none, in MiB. */
const DEFAULT_ARTIFACT_STORAGE_MB = 1024;

/** Newest previews kept per project and platform unless configured otherwise. */
const DEFAULT_PREVIEWS_KEPT = 10;

/** The builder-facing view of an artifact row. */
export function toPublished(row: ArtifactRow): PublishedArtifact {
  return {
    id: row.id,
    kind: row.kind,
    platform: row.platform,
    number: row.number,
    path: row.externalUrl ? null : artifactPath(row),
    externalUrl: row.externalUrl,
  };
}

/** What the publisher works with. */
export interface ArtifactPublisherDeps {
  store: Store;
  artifactStore: ArtifactStore;
  plans: PlanTable;
  clock: Clock;
  logger: Logger;
  /** Newest previews kept per project and platform (default DEFAULT_PREVIEWS_KEPT). */
  previewsKept?: number;
  /** `<dataDir>/workspaces`: the owner's workspaces (with their git history) count against the quota. */
  workspacesDir?: string;
}

/** Publishes artifacts with quota and retention (see above). */
export class ArtifactPublisher {
  constructor(private readonly deps: ArtifactPublisherDeps) {}

  /**
   * Publishes `request` for workflow `workflowId` of project `projectId`.
   * @returns the artifact, and the entries of the folder that were refused (links leaving it, or
   *   not regular files), as paths relative to the folder.
   * @param beforeInsert runs inside the transaction that records the row, first; what it throws
   *   rolls the row back (the workflow engine checks there that its runner still holds the workflow).
   * @param afterInsert runs inside that transaction after the row is inserted (a deployment's
   *   release, `release-recorder.ts`); what it throws rolls the row back too.
   * @throws BuildFailure `artifact_quota_exceeded` when the owner's storage is full;
   *   Error when the folder to publish does not exist; whatever `beforeInsert` throws, or the
   *   request's `recordAfter` rejects with (nothing recorded, the copied files removed).
   */
  async publish(
    projectId: string,
    workflowId: string,
    request: PublishRequest,
    beforeInsert?: (tx: Tx) => Promise<void>,
    afterInsert?: (tx: Tx, row: ArtifactRow) => Promise<void>,
  ): Promise<{ published: PublishedArtifact; refused: string[] }> {
    const { artifactStore, store } = this.deps;
    const id = randomUUID();
    const { externalUrl, imported, quota } = await this.importFiles(id, projectId, request);
    let expired: ArtifactRow[] = [];
    let row: ArtifactRow;
    try {
      if ('recordAfter' in request) await request.recordAfter;
      row = await store.transaction(async (tx) => {
        await beforeInsert?.(tx);
        // Checked again under the owner's row lock, in the transaction that records the artifact:
        // two builds of one owner (on any nodes) publishing at once cannot both fit in what is left.
        if (quota) await this.checkQuotaIn(tx, quota, imported.bytes);
        const { artifacts } = tx;
        const inserted: ArtifactRow = {
          id,
          projectId,
          workflowId,
          kind: request.kind,
          platform: request.platform,
          number: request.kind === 'deployment' ? await artifacts.deployNumber(projectId, workflowId) : null,
          externalUrl,
          bytes: imported.bytes,
          createdAt: isoNow(this.deps.clock),
          blobId: imported.blobId,
        };
        await artifacts.insert(inserted);
        await afterInsert?.(tx, inserted);
        if (request.kind === 'preview') {
          expired = await artifacts.previewsBeyond(
            projectId,
            request.platform,
            this.deps.previewsKept ?? DEFAULT_PREVIEWS_KEPT,
          );
          await artifacts.delete(expired.map((r) => r.id));
        }
        return inserted;
      });
    } catch (error) {
      // No row names the files: they go (with their blob), so nothing is left that nobody serves.
      if (!externalUrl)
        await artifactStore
          .remove({ id, blobId: imported.blobId })
          .catch((removeError: unknown) =>
            this.deps.logger.warn({ err: removeError, artifactId: id }, 'could not remove an unrecorded artifact'),
          );
      throw error;
    }
    for (const old of expired) {
      await artifactStore
        .remove(old)
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, artifactId: old.id }, 'could not remove an expired preview'),
        );
    }
    return { published: toPublished(row), refused: imported.refused };
  }

  /**
   * Before the publish transaction: copies the request's folder (`sourceDir`, or the files of the
   * published artifact `fromArtifactId`) into the artifact store as artifact `id`, within what the
   * owner's quota leaves (docs/builders.md "Previews and deployments"). An `externalUrl` request
   * copies nothing.
   * @returns the URL (or null), what was imported (`bytes`, `refused` entries, `blobId`; 0 bytes
   *   for a URL), and the quota as read before the copy (undefined for a URL: nothing to count).
   * @throws BuildFailure `artifact_quota_exceeded` when the files do not fit; Error when the
   *   artifact to copy from does not exist.
   */
  private async importFiles(
    id: string,
    projectId: string,
    request: PublishRequest,
  ): Promise<{ externalUrl: string | null; imported: ImportedFolder; quota: Quota | undefined }> {
    const empty: ImportedFolder = { bytes: 0, refused: [], blobId: null };
    if ('externalUrl' in request) return { externalUrl: request.externalUrl, imported: empty, quota: undefined };
    const { artifactStore } = this.deps;
    const source =
      'sourceDir' in request
        ? request.sourceDir
        : await artifactStore.localDir(request.fromArtifactId).catch((error: unknown) => {
            throw error instanceof ArtifactNotFoundError ? new Error('The folder to publish does not exist.') : error;
          });
    const quota = await this.quota(projectId);
    const allowance = quota.quotaBytes - quota.artifactBytes - quota.workspaceBytes;
    if (allowance <= 0) throw quotaFailure(quota.quotaBytes, quota.artifactBytes + quota.workspaceBytes);
    try {
      return { externalUrl: null, imported: await artifactStore.importFolder(id, source, allowance), quota };
    } catch (error) {
      if (error instanceof ArtifactTooLargeError)
        throw quotaFailure(quota.quotaBytes, quota.artifactBytes + quota.workspaceBytes);
      throw error;
    }
  }

  /**
   * Inside the publish transaction: locks the owner's row and checks that `bytes` more fit in the
   * quota, counting the artifacts recorded now (the workspaces as measured before the transaction:
   * they are files, read outside it).
   * @throws BuildFailure `artifact_quota_exceeded` when they do not (the transaction rolls back).
   */
  private async checkQuotaIn(tx: Tx, quota: Quota, bytes: number): Promise<void> {
    await tx.lock('users', quota.ownerId);
    const used = (await tx.artifacts.bytesUsedByOwner(quota.ownerId)) + quota.workspaceBytes;
    if (used + bytes > quota.quotaBytes) throw quotaFailure(quota.quotaBytes, used);
  }

  /** The owner's storage quota and what the owner's artifacts and workspaces use now, in bytes. */
  private async quota(projectId: string): Promise<Quota> {
    const { repos } = this.deps.store;
    const project = await repos.projects.findById(projectId);
    const owner = project ? await repos.users.findById(project.ownerId) : undefined;
    const limits = limitsFor(this.deps.plans, owner?.plan ?? 'free');
    const artifactBytes = project ? await repos.artifacts.bytesUsedByOwner(project.ownerId) : 0;
    let workspaceBytes = 0;
    const { workspacesDir } = this.deps;
    if (project && workspacesDir) {
      for (const own of await repos.projects.listByOwner(project.ownerId))
        workspaceBytes += await folderBytes(join(workspacesDir, own.id));
    }
    return {
      ownerId: project?.ownerId ?? '',
      quotaBytes: (limits.artifactStorageMb ?? DEFAULT_ARTIFACT_STORAGE_MB) * 1024 * 1024,
      artifactBytes,
      workspaceBytes,
    };
  }
}

/** An owner's storage quota and its use, in bytes, as read before a publication. */
interface Quota {
  ownerId: string;
  quotaBytes: number;
  /** Bytes of the owner's recorded artifacts. */
  artifactBytes: number;
  /** Bytes of the owner's project workspaces (files on this node). */
  workspaceBytes: number;
}

function quotaFailure(quotaBytes: number, usedBytes: number): BuildFailure {
  const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
  return new BuildFailure(
    'artifact_quota_exceeded',
    `The account's artifact storage is full (${mib(usedBytes)} of ${mib(quotaBytes)} MiB used by artifacts and workspaces; this publication does not fit). ` +
      `Only the newest ${DEFAULT_PREVIEWS_KEPT} previews of each project are kept; deployments are kept. Ask the operator for a larger plan.`,
  );
}
