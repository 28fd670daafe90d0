/**
 * Published artifacts as blobs of the store (docs/postgresql.md#artifacts), for a service of
 * several nodes on one PostgreSQL database: any node serves any preview or deployment.
 *
 * - `importFolder` copies the published files as `DiskArtifactStore` does (regular files only),
 *   packs them as tar.gz and streams that into one blob; the caller records the artifact row with
 *   the blob's id in its publish transaction, so an artifact appears whole or not at all.
 * - `localDir` is a read-through cache: the first read of an artifact on a node downloads and
 *   unpacks its blob into `<dataDir>/artifact-cache/<id>/` (a temporary folder renamed into place;
 *   concurrent reads share one download), later reads use the folder. Artifacts are immutable, so a
 *   cached copy is always right. The least recently used folders are removed once the cache holds
 *   more than its limit (the folder just read is always kept).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { packFolder, unpackInto } from '../io/folder-archive.js';
import { folderBytes } from '../io/folder-size.js';
import type { BlobStore } from '../store/blob-store.js';
import type { ArtifactRepo } from '../store/repos.js';
import {
  ArtifactNotFoundError,
  copyPublishedFiles,
  resolveInside,
  type ArtifactStore,
  type ImportedFolder,
  type StoredArtifact,
} from './artifact-store.js';

/** The cache's default limit (`--artifact-cache-mb`), in MiB. */
const DEFAULT_ARTIFACT_CACHE_MB = 2048;

/** What a blob artifact store works with. */
export interface BlobArtifactStoreDeps {
  /** The node's data dir: the cache is `<dataDir>/artifact-cache/`. */
  dataDir: string;
  blobs: BlobStore;
  /** Where an artifact's blob id is read (`artifacts.blob_id`). */
  artifacts: Pick<ArtifactRepo, 'findById'>;
  /** Most the cache holds before it evicts, in MiB (default `DEFAULT_ARTIFACT_CACHE_MB`). */
  cacheMb?: number;
}

/** One cached artifact folder: its size and when it was last read (ms, this process's clock). */
interface CacheEntry {
  bytes: number;
  usedAt: number;
}

/** Artifacts as blobs, with a per-node read-through cache (see the file comment). */
export class BlobArtifactStore implements ArtifactStore {
  /** `<dataDir>/artifact-cache`. */
  readonly cacheRoot: string;
  private readonly limitBytes: number;
  private readonly entries = new Map<string, CacheEntry>();
  private readonly downloads = new Map<string, Promise<string>>();
  private scanned: Promise<void> | undefined;
  /** Moves forward on every read, so that two reads in one millisecond still order. */
  private tick = 0;

  constructor(private readonly deps: BlobArtifactStoreDeps) {
    this.cacheRoot = join(deps.dataDir, 'artifact-cache');
    this.limitBytes = (deps.cacheMb ?? DEFAULT_ARTIFACT_CACHE_MB) * 1024 * 1024;
  }

  /** Bytes the cache holds now (its folders' files). */
  cachedBytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.bytes;
    return total;
  }

  async importFolder(id: string, sourceDir: string, maxBytes = Number.POSITIVE_INFINITY): Promise<ImportedFolder> {
    await this.scan();
    const tmp = join(this.cacheRoot, `.tmp-${id}-${randomUUID()}`);
    try {
      const { bytes, refused } = await copyPublishedFiles(sourceDir, tmp, maxBytes);
      const blob = await this.deps.blobs.put(packFolder(tmp));
      // The publishing node keeps its copy: a worker re-publishing it (`fromArtifactId`) or an
      // `all` node serving it reads it without a download.
      await this.adopt(id, tmp, bytes);
      return { bytes, refused, blobId: blob.id };
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  async localDir(id: string): Promise<string> {
    await this.scan();
    const dir = this.dirOf(id);
    const cached = this.entries.get(id);
    if (cached) {
      // Another process on this data dir may have evicted it: then it is fetched again.
      if ((await stat(dir).catch(() => null))?.isDirectory()) {
        cached.usedAt = this.now();
        return dir;
      }
      this.entries.delete(id);
    }
    let download = this.downloads.get(id);
    if (!download) {
      download = this.download(id).finally(() => this.downloads.delete(id));
      this.downloads.set(id, download);
    }
    return download;
  }

  async resolveFile(id: string, subPath: string): Promise<string | null> {
    let dir: string;
    try {
      dir = await this.localDir(id);
    } catch (error) {
      if (error instanceof ArtifactNotFoundError) return null;
      throw error;
    }
    return resolveInside(dir, subPath);
  }

  screenshotFileOf(id: string): string {
    return join(this.cacheRoot, `${id}.screenshot.png`);
  }

  async remove(artifact: StoredArtifact): Promise<void> {
    await this.evict(artifact.id);
    if (artifact.blobId) await this.deps.blobs.remove(artifact.blobId);
  }

  async removeTemporary(): Promise<number> {
    const names = await readdir(this.cacheRoot).catch(() => [] as string[]);
    const stale = names.filter((name) => name.startsWith('.tmp-'));
    await Promise.all(stale.map((name) => rm(join(this.cacheRoot, name), { recursive: true, force: true })));
    return stale.length;
  }

  private dirOf(id: string): string {
    return join(this.cacheRoot, id);
  }

  private now(): number {
    this.tick = Math.max(this.tick + 1, Date.now());
    return this.tick;
  }

  /** Fetches and unpacks artifact `id` into the cache. @throws ArtifactNotFoundError when it has no blob. */
  private async download(id: string): Promise<string> {
    const row = await this.deps.artifacts.findById(id);
    if (!row?.blobId) throw new ArtifactNotFoundError(id);
    const tmp = join(this.cacheRoot, `.tmp-${id}-${randomUUID()}`);
    try {
      await mkdir(tmp, { recursive: true });
      await unpackInto(await this.deps.blobs.get(row.blobId), tmp, ['file', 'folder']);
      await this.adopt(id, tmp, await folderBytes(tmp));
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
    return this.dirOf(id);
  }

  /** Renames the complete folder `tmp` into the cache as artifact `id`, then evicts over the limit. */
  private async adopt(id: string, tmp: string, bytes: number): Promise<void> {
    try {
      await rename(tmp, this.dirOf(id));
    } catch (error) {
      // Another process on this data dir put the same artifact there first: its copy is as good.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await rm(tmp, { recursive: true, force: true });
    }
    this.entries.set(id, { bytes, usedAt: this.now() });
    await this.evictOverLimit(id);
  }

  /** Removes the least recently read folders until the cache fits its limit, never `keep`. */
  private async evictOverLimit(keep: string): Promise<void> {
    let total = this.cachedBytes();
    if (total <= this.limitBytes) return;
    const oldestFirst = [...this.entries].filter(([id]) => id !== keep).sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [id, entry] of oldestFirst) {
      if (total <= this.limitBytes) break;
      total -= entry.bytes;
      await this.evict(id);
    }
  }

  private async evict(id: string): Promise<void> {
    this.entries.delete(id);
    await rm(this.dirOf(id), { recursive: true, force: true });
    await rm(this.screenshotFileOf(id), { force: true });
  }

  /** Once per process: the folders an earlier run left in the cache, oldest modified first. */
  private scan(): Promise<void> {
    this.scanned ??= (async () => {
      await mkdir(this.cacheRoot, { recursive: true });
      const found: { id: string; bytes: number; mtimeMs: number }[] = [];
      for (const name of await readdir(this.cacheRoot)) {
        if (name.startsWith('.') || name.endsWith('.png')) continue;
        const info = await stat(join(this.cacheRoot, name)).catch(() => null);
        if (info?.isDirectory())
          found.push({ id: name, bytes: await folderBytes(join(this.cacheRoot, name)), mtimeMs: info.mtimeMs });
      }
      for (const { id, bytes } of found.sort((a, b) => a.mtimeMs - b.mtimeMs))
        this.entries.set(id, { bytes, usedAt: this.now() });
    })();
    return this.scanned;
  }
}
