/**
 * The blob port (docs/postgresql.md, "Blob store"): immutable byte strings stored whole in the
 * database, so that every node reads what any node wrote. Artifacts (one packed folder each) and
 * workspace snapshots are blobs on PostgreSQL; the SQLite store keeps them on disk and has none.
 */
import type { Readable } from 'node:stream';

/** What `put` stored. */
export interface StoredBlob {
  /** The new blob's id (a UUID). */
  id: string;
  /** Length of the content in bytes. */
  bytes: number;
  /** SHA-256 of the content, lowercase hex. */
  sha256: string;
}

/** Stores and streams immutable blobs. */
export interface BlobStore {
  /**
   * Streams `source` into a new blob, in one transaction: the blob exists whole once this
   * resolves, and not at all when it rejects (the source failed, or the store did).
   * @param source a byte stream (Buffers or strings); read to its end, destroyed when `put` fails
   * @throws the source's error, or the driver's when the store fails
   */
  put(source: Readable): Promise<StoredBlob>;
  /**
   * A stream of the blob's content, read from the store a chunk at a time as it is consumed.
   * The stream errors with `BlobNotFoundError` when the blob is removed while it is being read.
   * @throws BlobNotFoundError when no blob has this id
   */
  get(id: string): Promise<Readable>;
  /**
   * Deletes the blob and its content; an unknown id is not an error.
   * @throws the driver's error when a row still names the blob (an artifact or a workspace snapshot)
   */
  remove(id: string): Promise<void>;
}

/** `get` of a blob that does not exist (never stored, or removed). */
export class BlobNotFoundError extends Error {
  constructor(readonly blobId: string) {
    super(`blob ${blobId} not found`);
    this.name = 'BlobNotFoundError';
  }
}
