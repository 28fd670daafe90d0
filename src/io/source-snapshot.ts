/**
 * The app's source files as a deploy publishes them (docs/releases.md "Changes"), and the changes
 * between two such snapshots: what each deploy's result message names and its deployment page
 * shows. A snapshot is the text files of a workspace (dot entries, `node_modules`, `dist`, `build`
 * and `web-build` left out; no link followed; binary files, files over `MAX_FILE_BYTES` and
 * anything past `MAX_FILES` or `MAX_TOTAL_BYTES` left out), stored gzipped with its release.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createTwoFilesPatch, diffLines } from 'diff';

/** Folders never part of the source: dependencies and build output. */
const SKIPPED = new Set(['node_modules', 'dist', 'build', 'web-build']);
/** Largest file kept, in bytes. */
const MAX_FILE_BYTES = 256 * 1024;
/** Most files kept. */
const MAX_FILES = 2000;
/** Most bytes kept in all. */
const MAX_TOTAL_BYTES = 4 * 1024 * 1024;

/** Source files by path (relative, `/`-separated), sorted by path. */
export type SourceFiles = Record<string, string>;

/** One file that differs between two snapshots: its path, the lines added and removed. */
export interface FileChange {
  path: string;
  added: number;
  removed: number;
}

/** The text files of folder `dir` (see the file comment); an absent folder has none. */
export async function readSourceFiles(dir: string): Promise<SourceFiles> {
  const files: SourceFiles = {};
  let count = 0;
  let total = 0;
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.') || count >= MAX_FILES) continue;
      const path = join(folder, entry.name);
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) await walk(path, rel);
        continue;
      }
      if (!entry.isFile()) continue;
      const info = await lstat(path).catch(() => null);
      if (!info?.isFile() || info.size > MAX_FILE_BYTES || total + info.size > MAX_TOTAL_BYTES) continue;
      const bytes = await readFile(path).catch(() => null);
      if (!bytes || bytes.subarray(0, 8000).includes(0)) continue;
      files[rel] = bytes.toString('utf8');
      count++;
      total += bytes.length;
    }
  };
  await walk(dir, '');
  return files;
}

/** A snapshot as stored: gzipped JSON. */
export function packSourceFiles(files: SourceFiles): Buffer {
  return gzipSync(JSON.stringify(files));
}

/** A stored snapshot read back; an unreadable one is empty. */
export function unpackSourceFiles(packed: Buffer | null): SourceFiles {
  if (!packed) return {};
  try {
    const parsed: unknown = JSON.parse(gunzipSync(packed).toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as SourceFiles) : {};
  } catch {
    return {};
  }
}

/** The files that differ from `before` to `after` (added, removed or changed), by path, with their line counts. */
export function sourceChanges(before: SourceFiles, after: SourceFiles): FileChange[] {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: FileChange[] = [];
  for (const path of paths) {
    const a = before[path];
    const b = after[path];
    if (a === b) continue;
    let added = 0;
    let removed = 0;
    for (const part of diffLines(a ?? '', b ?? '')) {
      if (part.added) added += part.count ?? 0;
      else if (part.removed) removed += part.count ?? 0;
    }
    changes.push({ path, added, removed });
  }
  return changes;
}

/**
 * The unified diff (`diff -u`) of every changed file from `before` to `after`, cut at `maxChars`
 * characters (with a line that says so).
 */
export function sourcePatch(before: SourceFiles, after: SourceFiles, maxChars = 200_000): string {
  let text = '';
  for (const { path } of sourceChanges(before, after)) {
    const from = path in before ? `a/${path}` : '/dev/null';
    const to = path in after ? `b/${path}` : '/dev/null';
    text += createTwoFilesPatch(from, to, before[path] ?? '', after[path] ?? '', '', '', { context: 3 });
    if (text.length > maxChars) return `${text.slice(0, maxChars)}\n… (the diff is longer: cut here)\n`;
  }
  return text;
}

/** `App.tsx (+3 −1), src/a.ts (+12 −0)`: the first `max` changes, and how many more. */
export function describeChanges(changes: readonly FileChange[], max = 20): string {
  const shown = changes.slice(0, max).map((c) => `${c.path} (+${c.added} −${c.removed})`);
  const more = changes.length > max ? ` and ${changes.length - max} more` : '';
  return `${shown.join(', ')}${more}`;
}
