/**
 * Blobs in PostgreSQL (docs/postgresql.md, "Blob store"): a `blobs` row (length, SHA-256) and its
 * content in `blob_chunks` as `bytea` rows `n` = 0, 1, ... of `chunkBytes` each (the last one
 * shorter; none for an empty blob). Bytes are streamed both ways: `put` holds at most one chunk
 * (plus the piece of the source that filled it) in memory, `get` fetches one chunk per read.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { BlobNotFoundError, type BlobStore, type StoredBlob } from '../blob-store.js';

/** Default chunk size: 256 KiB (sent as hex text, so a statement carries 512 KiB). */
const DEFAULT_CHUNK_BYTES = 256 * 1024;
/** The schema's bound on a chunk (`blob_chunks`: at most 1 MiB). */
const MAX_CHUNK_BYTES = 1024 * 1024;

/** A `BlobStore` on the `blobs` and `blob_chunks` tables of a database migrated by `migratePostgres`. */
export class PgBlobStore implements BlobStore {
  private readonly chunkBytes: number;

  /**
   * @param pool the store's pool (the caller owns it); `put` holds one connection for its transaction,
   *   `get` borrows one per chunk
   * @param options `chunkBytes`: bytes per chunk row, 1 to 1 MiB (default 256 KiB)
   * @throws RangeError when `chunkBytes` is out of range
   */
  constructor(
    private readonly pool: pg.Pool,
    options: { chunkBytes?: number } = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (!Number.isInteger(this.chunkBytes) || this.chunkBytes < 1 || this.chunkBytes > MAX_CHUNK_BYTES) {
      throw new RangeError(`chunkBytes must be an integer from 1 to ${MAX_CHUNK_BYTES}`);
    }
  }

  async put(source: Readable): Promise<StoredBlob> {
    const id = randomUUID();
    const hash = createHash('sha256');
    let bytes = 0;
    let n = 0;
    const client = await this.pool.connect().catch((error: unknown) => {
      source.destroy();
      throw error;
    });
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      // The row first (the chunks reference it); its length and hash are set at the end, before COMMIT.
      await client.query('INSERT INTO blobs (id, bytes, sha256, created_at) VALUES ($1, 0, $2, $3)', [
        id,
        '',
        new Date().toISOString(),
      ]);
      const insertChunk = (data: Buffer) =>
        client.query('INSERT INTO blob_chunks (blob_id, n, data) VALUES ($1, $2, $3)', [id, n++, data]);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const piece of source) {
        const buffer = typeof piece === 'string' ? Buffer.from(piece) : Buffer.from(piece as Uint8Array);
        hash.update(buffer);
        bytes += buffer.length;
        pending.push(buffer);
        pendingBytes += buffer.length;
        if (pendingBytes < this.chunkBytes) continue;
        let joined = Buffer.concat(pending, pendingBytes);
        while (joined.length >= this.chunkBytes) {
          await insertChunk(joined.subarray(0, this.chunkBytes));
          joined = joined.subarray(this.chunkBytes);
        }
        pending = joined.length > 0 ? [joined] : [];
        pendingBytes = joined.length;
      }
      if (pendingBytes > 0) await insertChunk(Buffer.concat(pending, pendingBytes));
      const sha256 = hash.digest('hex');
      await client.query('UPDATE blobs SET bytes = $2, sha256 = $3 WHERE id = $1', [id, bytes, sha256]);
      await client.query('COMMIT');
      return { id, bytes, sha256 };
    } catch (error) {
      source.destroy();
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    } finally {
      // A connection whose ROLLBACK failed is closed rather than given back to the pool.
      client.release(broken);
    }
  }

  async get(id: string): Promise<Readable> {
    const found = await this.pool.query<{ bytes: string }>('SELECT bytes FROM blobs WHERE id = $1', [id]);
    if (found.rowCount === 0) throw new BlobNotFoundError(id);
    const total = Number(found.rows[0]!.bytes);
    const pool = this.pool;
    async function* chunks(): AsyncGenerator<Buffer> {
      let sent = 0;
      for (let n = 0; sent < total; n++) {
        const row = await pool.query<{ data: Buffer }>('SELECT data FROM blob_chunks WHERE blob_id = $1 AND n = $2', [
          id,
          n,
        ]);
        // Removed while being read: the stream ends with an error, never short.
        if (row.rowCount === 0) throw new BlobNotFoundError(id);
        const data = row.rows[0]!.data;
        sent += data.length;
        yield data;
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  async remove(id: string): Promise<void> {
    // blob_chunks rows go with it (ON DELETE CASCADE).
    await this.pool.query('DELETE FROM blobs WHERE id = $1', [id]);
  }
}
