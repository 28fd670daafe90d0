/**
 * Where published artifacts' files live (docs/builders.md "Previews and deployments", docs/postgresql.md#artifacts):
 * one interface, two homes.
 *
 * - `DiskArtifactStore` (SQLite, one host): a folder per artifact under `<dataDir>/artifacts/`.
 * - `BlobArtifactStore` (PostgreSQL, several nodes): one tar.gz blob per artifact in the database,
 *   unpacked on demand into a per-node cache, so that any node serves any artifact.
 *
 * Either way an import copies regular files only. A symbolic link is followed only when it
 * resolves to a regular file inside the published folder; any other link (to `/etc/passwd`, to
 * the store, to a folder) is refused and reported, never followed. Serving resolves real paths
 * again, so a file outside the artifact folder is never served. Artifacts are immutable: nothing
 * rewrites one once it exists.
 */
import { copyFile, lstat, mkdir, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { ArtifactRow } from '../store/rows.js';

/** What an import copied: its size, the entries it refused (paths relative to the source), and its blob. */
export interface ImportedFolder {
  /** Bytes of the files copied (what counts against the owner's quota). */
  bytes: number;
  refused: string[];
  /** The blob that holds the packed files (record it in the artifact row), or null for a folder on disk. */
  blobId: string | null;
}

/** The artifact row fields a removal needs: its id, and its blob if it has one. */
export type StoredArtifact = Pick<ArtifactRow, 'id' | 'blobId'>;

/** The files of published artifacts (see the file comment). */
export interface ArtifactStore {
  /**
   * Copies the regular files of `sourceDir` into new artifact `id` (links: see the file comment).
   * Nothing is visible to readers until the artifact's row is recorded with the returned `blobId`.
   * @param maxBytes the most the copy may hold (default: no limit).
   * @throws Error when the source is not a folder (the message names no server path);
   *   ArtifactTooLargeError over `maxBytes` (nothing is left behind); the store's error.
   */
  importFolder(id: string, sourceDir: string, maxBytes?: number): Promise<ImportedFolder>;
  /**
   * A local folder holding artifact `id`'s files (its files never change). The blob store fetches
   * and unpacks the artifact on first use.
   * @throws ArtifactNotFoundError when no such artifact has files here or in the store.
   */
  localDir(id: string): Promise<string>;
  /**
   * The file to serve for `subPath` inside artifact `id`, or null when the path leaves the
   * artifact folder (before or after resolving links), names nothing, or the artifact is unknown.
   * A folder maps to its `index.html`.
   */
  resolveFile(id: string, subPath: string): Promise<string | null>;
  /**
   * The cached screenshot of web artifact `id` (docs/hosts.md "Screenshots"): beside its folder, not in
   * it, so that it is never served as one of the artifact's files.
   */
  screenshotFileOf(id: string): string;
  /** Removes an artifact's files, local copies and blob (call after its row is deleted); missing ones are fine. */
  remove(artifact: StoredArtifact): Promise<void>;
  /** Removes half-copied folders a killed process left behind. Call at start. @returns how many. */
  removeTemporary(): Promise<number>;
}

/** Thrown when an import would exceed the byte allowance it was given. */
export class ArtifactTooLargeError extends Error {
  constructor(readonly allowanceBytes: number) {
    super(`The published files exceed the ${allowanceBytes} bytes left in the account's artifact storage.`);
    this.name = 'ArtifactTooLargeError';
  }
}

/** `localDir` of an artifact that has no files (unknown id, an external URL, or a removed one). */
export class ArtifactNotFoundError extends Error {
  constructor(readonly artifactId: string) {
    super(`artifact ${artifactId} has no files`);
    this.name = 'ArtifactNotFoundError';
  }
}

/** Files of one folder at most, so a hostile build cannot publish millions of entries. */
const MAX_FILES_PER_ARTIFACT = 20_000;

/**
 * Copies the regular files of `sourceDir` into the new folder `targetDir` (links: see the file comment).
 * @returns the bytes copied and the refused entries.
 * @throws Error when the source is not a folder; ArtifactTooLargeError over `maxBytes` (the caller
 *   removes `targetDir`).
 */
export async function copyPublishedFiles(
  sourceDir: string,
  targetDir: string,
  maxBytes: number,
): Promise<{ bytes: number; refused: string[] }> {
  const info = await stat(sourceDir).catch(() => null);
  if (!info?.isDirectory()) throw new Error('The folder to publish does not exist.');
  const sourceRoot = await realpath(sourceDir);
  const result = { bytes: 0, refused: [] as string[] };
  let files = 0;
  const copyTree = async (from: string, to: string): Promise<void> => {
    await mkdir(to, { recursive: true });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      const shown = relative(sourceRoot, source);
      let file = source;
      if (entry.isSymbolicLink()) {
        const resolved = await realpath(source).catch(() => null);
        const inside = resolved !== null && (resolved === sourceRoot || resolved.startsWith(sourceRoot + sep));
        const resolvedInfo = resolved ? await stat(resolved).catch(() => null) : null;
        if (!inside || !resolvedInfo?.isFile()) {
          result.refused.push(`${shown} -> ${await describeLink(source)}`);
          continue;
        }
        file = resolved!;
      } else if (entry.isDirectory()) {
        await copyTree(source, target);
        continue;
      } else if (!entry.isFile()) {
        result.refused.push(shown);
        continue;
      }
      if (++files > MAX_FILES_PER_ARTIFACT)
        throw new Error(`A published folder may hold at most ${MAX_FILES_PER_ARTIFACT} files.`);
      const size = (await lstat(file)).size;
      if (result.bytes + size > maxBytes) throw new ArtifactTooLargeError(maxBytes);
      result.bytes += size;
      await copyFile(file, target);
    }
  };
  await copyTree(sourceRoot, targetDir);
  return result;
}

/**
 * The file to serve for `subPath` inside the folder `dir`, or null when the path leaves it (before
 * or after resolving links) or names nothing. A folder maps to its `index.html`.
 */
export async function resolveInside(dir: string, subPath: string): Promise<string | null> {
  const base = resolve(dir);
  let target = resolve(base, '.' + sep + subPath);
  if (target !== base && !target.startsWith(base + sep)) return null;
  let info = await stat(target).catch(() => null);
  if (!info) return null;
  if (info.isDirectory()) {
    target = join(target, 'index.html');
    info = await stat(target).catch(() => null);
  }
  if (!info?.isFile()) return null;
  const realBase = await realpath(base).catch(() => null);
  const real = await realpath(target).catch(() => null);
  if (!realBase || !real || !real.startsWith(realBase + sep)) return null;
  return real;
}

async function describeLink(path: string): Promise<string> {
  const target = await readlink(path).catch(() => '?');
  // Name where a link pointed only by its last part: the server's paths stay private.
  return target.startsWith('/') ? `(absolute path …/${target.split('/').pop()})` : target;
}

/** The URL section of each kind of artifact. */
const ARTIFACT_SECTIONS = { preview: 'previews', deployment: 'deployments', export: 'exports' } as const;

/** The service-relative path of a served artifact: `/previews/<id>/`, `/deployments/<id>/` or `/exports/<id>/`. */
export function artifactPath(row: Pick<ArtifactRow, 'id' | 'kind'>): string {
  return `/${ARTIFACT_SECTIONS[row.kind]}/${row.id}/`;
}
