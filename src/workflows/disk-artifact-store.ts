/**
 * Published artifacts on the local disk (the SQLite store's, one host): each under
 * `<dataDir>/artifacts/<id>/`, copied in through a temporary folder and renamed into place, so a
 * half-copied artifact is never served (src/workflows/artifact-store.ts has the rules).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ArtifactNotFoundError,
  copyPublishedFiles,
  resolveInside,
  type ArtifactStore,
  type ImportedFolder,
  type StoredArtifact,
} from './artifact-store.js';

/** Artifact folders under `<dataDir>/artifacts/`. */
export class DiskArtifactStore implements ArtifactStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'artifacts');
  }

  /** Folder of artifact `id` (not checked for existence). */
  dirOf(id: string): string {
    return join(this.root, id);
  }

  async importFolder(id: string, sourceDir: string, maxBytes = Number.POSITIVE_INFINITY): Promise<ImportedFolder> {
    await mkdir(this.root, { recursive: true });
    const tmp = join(this.root, `.tmp-${id}-${randomUUID()}`);
    try {
      const { bytes, refused } = await copyPublishedFiles(sourceDir, tmp, maxBytes);
      await rename(tmp, this.dirOf(id));
      return { bytes, refused, blobId: null };
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  async localDir(id: string): Promise<string> {
    const dir = this.dirOf(id);
    if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new ArtifactNotFoundError(id);
    return dir;
  }

  resolveFile(id: string, subPath: string): Promise<string | null> {
    return resolveInside(this.dirOf(id), subPath);
  }

  screenshotFileOf(id: string): string {
    return join(this.root, `${id}.screenshot.png`);
  }

  async remove(artifact: StoredArtifact): Promise<void> {
    await rm(this.dirOf(artifact.id), { recursive: true, force: true });
    await rm(this.screenshotFileOf(artifact.id), { force: true });
  }

  async removeTemporary(): Promise<number> {
    const entries = await readdir(this.root).catch(() => [] as string[]);
    const stale = entries.filter((name) => name.startsWith('.tmp-'));
    await Promise.all(stale.map((name) => rm(join(this.root, name), { recursive: true, force: true })));
    return stale.length;
  }
}
