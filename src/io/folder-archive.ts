/**
 * A folder as one tar.gz stream and back (docs/postgresql.md#artifacts): how artifacts and
 * workspace snapshots travel through the store's blobs. Packing stores paths relative to the
 * folder, with no owner names or modes beyond the permission bits (`portable`); unpacking keeps
 * every entry inside the target folder (no absolute paths, no `..`, nothing written through a link)
 * and takes only the kinds of entry it is told to.
 */
import type { Stats } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create, extract, type ReadEntry } from 'tar';

/** An entry kind an archive may hold: regular files and folders, and symbolic links where allowed. */
type EntryKind = 'file' | 'folder' | 'link';

/**
 * The tar.gz of `dir`'s content, as a byte stream (read it to the end, or destroy it).
 * @param options `skip(path, stats)`: true to leave out an entry (and a folder's whole content);
 *   `path` is relative to `dir`, with `/` separators.
 */
export function packFolder(dir: string, options: { skip?: (path: string, stats: Stats) => boolean } = {}): Readable {
  const { skip } = options;
  const pack = create(
    {
      gzip: true,
      cwd: dir,
      portable: true,
      // Packing hands the filter the entry's lstat.
      ...(skip && { filter: (path: string, stats: Stats | ReadEntry) => !skip(path.replace(/^\.\//, ''), stats as Stats) }),
    },
    ['.'],
  );
  return Readable.from(pack as AsyncIterable<Buffer>, { objectMode: false });
}

/**
 * Unpacks the tar.gz `source` into the existing, empty folder `dir`.
 * @param kinds the entry kinds to take; any other entry (a link in an artifact, a device) is left out
 * @throws the source's error, or tar's for a broken archive (what was written stays: unpack into a
 *   temporary folder and rename it into place)
 */
export async function unpackInto(source: Readable, dir: string, kinds: readonly EntryKind[]): Promise<void> {
  const allowed = new Set<string>([...(kinds.includes('file') ? ['File', 'OldFile', 'ContiguousFile'] : []), ...(kinds.includes('folder') ? ['Directory'] : []), ...(kinds.includes('link') ? ['SymbolicLink'] : [])]);
  await pipeline(source, extract({ cwd: dir, strict: true, filter: (_path, entry) => 'type' in entry && allowed.has(entry.type) }));
}
