/**
 * Looks for secret values in the files of a folder before they are published (docs/security.md
 * "Project environment"): a build may write a secret into its output (an agent that hard-codes a
 * key, a command that echoes it into a file), and nothing that holds one may become an artifact.
 * Each value is searched as UTF-8 and as UTF-16LE (the form Hermes bytecode keeps some strings in).
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Largest file read, in bytes: a bigger one is read anyway in pieces by no one; it is refused. */
const MAX_FILE_BYTES = 512 * 1024 * 1024;

/**
 * The first file of `dir` (relative path) holding one of `secrets`' values, with that secret's name;
 * null when none does. Regular files and links to regular files are read; other entries are skipped
 * (publishing refuses them anyway).
 * @throws Error for a file over `MAX_FILE_BYTES`
 */
export async function findSecretIn(
  dir: string,
  secrets: Readonly<Record<string, string>>,
): Promise<{ file: string; name: string } | null> {
  const needles = Object.entries(secrets)
    .filter(([, value]) => value.length > 0)
    .flatMap(([name, value]) => [
      { name, bytes: Buffer.from(value, 'utf8') },
      { name, bytes: Buffer.from(value, 'utf16le') },
    ]);
  if (needles.length === 0) return null;
  const walk = async (folder: string, depth: number): Promise<{ file: string; name: string } | null> => {
    if (depth > 64) return null;
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        const found = await walk(path, depth + 1);
        if (found) return found;
        continue;
      }
      const info = entry.isSymbolicLink() ? await stat(path).catch(() => null) : await lstat(path);
      if (!info?.isFile()) continue;
      if (info.size > MAX_FILE_BYTES) throw new Error(`${relative(dir, path)} is too large to publish.`);
      const bytes = await readFile(path);
      const hit = needles.find((needle) => bytes.includes(needle.bytes));
      if (hit) return { file: relative(dir, path), name: hit.name };
    }
    return null;
  };
  return walk(dir, 0);
}
