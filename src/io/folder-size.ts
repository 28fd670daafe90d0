/**
 * The disk use of a folder tree, for storage quotas: regular files' sizes, links counted but never
 * followed (a workspace's `node_modules` link to the shared toolchain costs nothing).
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Bytes of the regular files under `dir` (0 when it does not exist).
 * @param maxEntries stop counting after this many entries (a hostile tree of millions of files
 *   cannot make a quota check slow); what was counted so far is returned.
 */
export async function folderBytes(dir: string, maxEntries = 200_000): Promise<number> {
  let bytes = 0;
  let entries = 0;
  const walk = async (folder: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      return; // gone, or not a folder
    }
    for (const name of names) {
      if (++entries > maxEntries) return;
      const path = join(folder, name);
      const info = await lstat(path).catch(() => null);
      if (!info) continue;
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) bytes += info.size;
    }
  };
  await walk(dir);
  return bytes;
}
