/**
 * Bounds the shared Metro transform cache (`<dataDir>/cache/metro`): every export adds entries
 * and Metro never removes any, so after an export (at most once per `PRUNE_EVERY_MS`) the oldest
 * written entries are deleted until the cache holds at most three quarters of its bound.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Largest size of the Metro cache before it is pruned (bytes). */
const METRO_CACHE_MAX_BYTES = 1024 * 1024 * 1024;
/** Least time between two prunings by one server (ms). */
export const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Deletes the oldest written files of `dir` while it holds more than `maxBytes`, down to 75 % of it.
 * @returns the bytes before and after.
 */
export async function pruneMetroCache(
  dir: string,
  maxBytes: number = METRO_CACHE_MAX_BYTES,
): Promise<{ before: number; after: number }> {
  const files: Array<{ path: string; bytes: number; mtimeMs: number }> = [];
  const walk = async (folder: string): Promise<void> => {
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(folder, name);
      const info = await lstat(path).catch(() => null);
      if (info?.isDirectory()) await walk(path);
      else if (info?.isFile()) files.push({ path, bytes: info.size, mtimeMs: info.mtimeMs });
    }
  };
  await walk(dir);
  const before = files.reduce((sum, f) => sum + f.bytes, 0);
  let after = before;
  if (before <= maxBytes) return { before, after };
  files.sort((a, b) => a.mtimeMs - b.mtimeMs);
  for (const file of files) {
    if (after <= maxBytes * 0.75) break;
    await rm(file.path, { force: true });
    after -= file.bytes;
  }
  return { before, after };
}
