/**
 * Published artifacts on disk (design section 5): each under `<dataDir>/artifacts/<id>/`, copied
 * in through a temporary folder and renamed into place, so a half-copied artifact is never served.
 * Deployments are immutable: nothing rewrites an artifact folder once it exists.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { ArtifactRow } from '../store/schema.js';

/** Artifact folders under `<dataDir>/artifacts/`. */
export class ArtifactStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'artifacts');
  }

  /** Folder of artifact `id` (not checked for existence). */
  dirOf(id: string): string {
    return join(this.root, id);
  }

  /**
   * Copies `sourceDir` into a new artifact folder `id`.
   * @throws Error when the source is not a folder.
   */
  async importFolder(id: string, sourceDir: string): Promise<void> {
    const info = await stat(sourceDir).catch(() => null);
    if (!info?.isDirectory()) throw new Error(`Artifact folder not found: ${sourceDir}`);
    await mkdir(this.root, { recursive: true });
    const tmp = join(this.root, `.tmp-${id}-${randomUUID()}`);
    try {
      await cp(sourceDir, tmp, { recursive: true, dereference: true, errorOnExist: false });
      await rename(tmp, this.dirOf(id));
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The file to serve for `subPath` inside artifact `id`, or null when the path leaves the
   * artifact folder or names nothing. A folder maps to its `index.html`.
   */
  async resolveFile(id: string, subPath: string): Promise<string | null> {
    const base = resolve(this.dirOf(id));
    const target = resolve(base, '.' + sep + subPath);
    if (target !== base && !target.startsWith(base + sep)) return null;
    const info = await stat(target).catch(() => null);
    if (!info) return null;
    if (info.isDirectory()) {
      const index = join(target, 'index.html');
      const indexInfo = await stat(index).catch(() => null);
      return indexInfo?.isFile() ? index : null;
    }
    return info.isFile() ? target : null;
  }
}

/** The service-relative path of a served artifact: `/previews/<id>/` or `/deployments/<id>/`. */
export function artifactPath(row: Pick<ArtifactRow, 'id' | 'kind'>): string {
  return `/${row.kind === 'preview' ? 'previews' : 'deployments'}/${row.id}/`;
}
