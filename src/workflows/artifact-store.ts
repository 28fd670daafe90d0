/**
 * Published artifacts on disk (README "Previews and deployments"): each under
 * `<dataDir>/artifacts/<id>/`, copied in through a temporary folder and renamed into place, so a
 * half-copied artifact is never served. Deployments are immutable: nothing rewrites an artifact
 * folder once it exists.
 *
 * Only regular files are published. A symbolic link is followed only when it resolves to a
 * regular file inside the published folder; any other link (to `/etc/passwd`, to the store, to
 * a folder) is refused and reported, never followed. Serving resolves real paths again, so a file
 * outside the artifact folder is never served.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdir, readdir, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { ArtifactRow } from '../store/rows.js';

/** What an import copied: its size and the entries it refused (paths relative to the source). */
export interface ImportedFolder {
  bytes: number;
  refused: string[];
}

/** Thrown when an import would exceed the byte allowance it was given. */
export class ArtifactTooLargeError extends Error {
  constructor(readonly allowanceBytes: number) {
    super(`The published files exceed the ${allowanceBytes} bytes left in the account's artifact storage.`);
    this.name = 'ArtifactTooLargeError';
  }
}

/** Files of one folder at most, so a hostile build cannot publish millions of entries. */
const MAX_FILES_PER_ARTIFACT = 20_000;

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
   * Copies the regular files of `sourceDir` into a new artifact folder `id` (links: see above).
   * @param maxBytes the most the copy may hold (default: no limit).
   * @throws Error when the source is not a folder (the message names no server path);
   *   ArtifactTooLargeError over `maxBytes` (nothing is left behind).
   */
  async importFolder(id: string, sourceDir: string, maxBytes = Number.POSITIVE_INFINITY): Promise<ImportedFolder> {
    const info = await stat(sourceDir).catch(() => null);
    if (!info?.isDirectory()) throw new Error('The folder to publish does not exist.');
    const sourceRoot = await realpath(sourceDir);
    await mkdir(this.root, { recursive: true });
    const tmp = join(this.root, `.tmp-${id}-${randomUUID()}`);
    const result: ImportedFolder = { bytes: 0, refused: [] };
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
        if (++files > MAX_FILES_PER_ARTIFACT) throw new Error(`A published folder may hold at most ${MAX_FILES_PER_ARTIFACT} files.`);
        const size = (await lstat(file)).size;
        if (result.bytes + size > maxBytes) throw new ArtifactTooLargeError(maxBytes);
        result.bytes += size;
        await copyFile(file, target);
      }
    };
    try {
      await copyTree(sourceRoot, tmp);
      await rename(tmp, this.dirOf(id));
      return result;
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The cached screenshot of web artifact `id` (README "Screenshots"): beside its folder, not in
   * it, so that it is never served as one of the artifact's files.
   */
  screenshotFileOf(id: string): string {
    return join(this.root, `${id}.screenshot.png`);
  }

  /** Removes artifact `id`'s files and its cached screenshot (retention); missing ones are fine. */
  async remove(id: string): Promise<void> {
    await rm(this.dirOf(id), { recursive: true, force: true });
    await rm(this.screenshotFileOf(id), { force: true });
  }

  /** Removes half-copied folders (`.tmp-*`) that a killed process left behind. Call at start. */
  async removeTemporary(): Promise<number> {
    const entries = await readdir(this.root).catch(() => [] as string[]);
    const stale = entries.filter((name) => name.startsWith('.tmp-'));
    await Promise.all(stale.map((name) => rm(join(this.root, name), { recursive: true, force: true })));
    return stale.length;
  }

  /**
   * The file to serve for `subPath` inside artifact `id`, or null when the path leaves the
   * artifact folder (before or after resolving links) or names nothing. A folder maps to its
   * `index.html`.
   */
  async resolveFile(id: string, subPath: string): Promise<string | null> {
    const base = resolve(this.dirOf(id));
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
}

async function describeLink(path: string): Promise<string> {
  const target = await readlink(path).catch(() => '?');
  // Name where a link pointed only by its last part: the server's paths stay private.
  return target.startsWith('/') ? `(absolute path …/${target.split('/').pop()})` : target;
}

/** The service-relative path of a served artifact: `/previews/<id>/` or `/deployments/<id>/`. */
export function artifactPath(row: Pick<ArtifactRow, 'id' | 'kind'>): string {
  return `/${row.kind === 'preview' ? 'previews' : 'deployments'}/${row.id}/`;
}
