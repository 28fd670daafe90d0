/**
 * A folder as one tar.gz stream and back (docs/postgresql.md#artifacts): how artifacts and
 * workspace snapshots travel through the store's blobs. Packing stores paths relative to the
 * folder, with no owner names or modes beyond the permission bits (`portable`); unpacking keeps
 * every entry inside the target folder (no absolute paths, no `..`, nothing written through a link)
 * and takes only the kinds of entry it is told to.
 *
 * The gzip layer is node:zlib's streams, which compress on libuv's thread pool: tar's own gzip
 * (minizlib) runs synchronously on the event loop, a stall of a large fraction of a second for a
 * few MB of a workspace on a busy machine, which delays a worker's lease renewals.
 */
import type { Stats } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { create, extract, type ReadEntry } from 'tar';

/** Largest piece of a file read at once while packing (tar's default is 16 MiB): bounds memory, keeps the loop free. */
const READ_BYTES = 1024 * 1024;

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
      cwd: dir,
      portable: true,
      maxReadSize: READ_BYTES,
      // Packing hands the filter the entry's lstat.
      ...(skip && {
        filter: (path: string, stats: Stats | ReadEntry) => !skip(path.replace(/^\.\//, ''), stats as Stats),
      }),
    },
    ['.'],
  );
  // Compressed by node:zlib's stream, on libuv's thread pool: tar's own gzip runs on the event loop.
  const gzip = createGzip();
  pipeline(Readable.from(pack as AsyncIterable<Buffer>, { objectMode: false }), gzip, () => undefined);
  return gzip;
}

/**
 * Unpacks the tar.gz `source` into the existing, empty folder `dir`.
 * @param kinds the entry kinds to take; any other entry (a link in an artifact, a device) is left out
 * @throws the source's error, zlib's for bytes that are not gzip, or tar's for a broken archive
 *   (what was written stays: unpack into a temporary folder and rename it into place)
 */
export async function unpackInto(source: Readable, dir: string, kinds: readonly EntryKind[]): Promise<void> {
  const allowed = new Set<string>([
    ...(kinds.includes('file') ? ['File', 'OldFile', 'ContiguousFile'] : []),
    ...(kinds.includes('folder') ? ['Directory'] : []),
    ...(kinds.includes('link') ? ['SymbolicLink'] : []),
  ]);
  // Decompressed on the thread pool (node:zlib), never by tar on the event loop.
  await pipelineAsync(
    source,
    createGunzip(),
    extract({ cwd: dir, strict: true, filter: (_path, entry) => 'type' in entry && allowed.has(entry.type) }),
  );
}
