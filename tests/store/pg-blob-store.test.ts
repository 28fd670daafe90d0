/**
 * The PostgreSQL blob store on a real server (docs/postgresql.md, "Blob store"): round trips at
 * the chunk boundaries, a failing upload leaves nothing, removal, a blob removed while it is read,
 * and concurrent uploads on a pool smaller than their number.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError } from '../../src/store/blob-store.js';
import { PgBlobStore } from '../../src/store/pg/blob-store.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

const CHUNK = 256 * 1024;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** `data` as a stream of pieces of `pieceBytes` (not aligned with the chunks). */
function streamOf(data: Buffer, pieceBytes = 100_003): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0; at < data.length; at += pieceBytes) pieces.push(data.subarray(at, at + pieceBytes));
  return Readable.from(pieces, { objectMode: false });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe.skipIf(!postgresAvailable())('PgBlobStore', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let blobs: PgBlobStore;
  const count = async (table: 'blobs' | 'blob_chunks') =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Fewer connections than the concurrent uploads below, so that they wait for each other.
    pool = new pg.Pool({ connectionString: db.url, max: 3 });
    blobs = new PgBlobStore(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it.each([
    ['0 bytes', 0, 0],
    ['1 byte', 1, 1],
    ['exactly one chunk', CHUNK, 1],
    ['three chunks and one byte', 3 * CHUNK + 1, 4],
  ])('round trip of %s: same bytes and SHA-256, %#', async (_name, size, chunks) => {
    const data = randomBytes(size);
    const stored = await blobs.put(streamOf(data));
    expect(stored).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), bytes: size, sha256: sha256(data) });
    const back = await readAll(await blobs.get(stored.id));
    expect(back.length).toBe(size);
    expect(sha256(back)).toBe(stored.sha256);
    expect(back.equals(data)).toBe(true);
    const rows = await pool.query<{ n: number; len: number }>(
      'SELECT n, length(data) AS len FROM blob_chunks WHERE blob_id = $1 ORDER BY n',
      [stored.id],
    );
    expect(rows.rows.map((row) => row.n)).toEqual(Array.from({ length: chunks }, (_, i) => i));
    expect(rows.rows.every((row) => row.len <= CHUNK)).toBe(true);
    const row = await pool.query('SELECT bytes, sha256 FROM blobs WHERE id = $1', [stored.id]);
    expect({ bytes: Number(row.rows[0].bytes), sha256: row.rows[0].sha256 }).toEqual({
      bytes: size,
      sha256: stored.sha256,
    });
  });

  it('takes strings and one-byte pieces as well as large ones', async () => {
    const data = Buffer.from('héllo, blobs');
    const stored = await blobs.put(Readable.from(['hé', 'llo', ', ', 'b', 'lobs']));
    expect(stored).toMatchObject({ bytes: data.length, sha256: sha256(data) });
    expect((await readAll(await blobs.get(stored.id))).equals(data)).toBe(true);
    const whole = randomBytes(2 * CHUNK + 7);
    const big = await blobs.put(streamOf(whole, 3 * CHUNK));
    expect((await readAll(await blobs.get(big.id))).equals(whole)).toBe(true);
  });

  it('a source that fails halfway rejects with its error and leaves no rows', async () => {
    const [blobsBefore, chunksBefore] = [await count('blobs'), await count('blob_chunks')];
    let served = 0;
    const failing = new Readable({
      read() {
        // Two full chunks reach the database first, then the source fails.
        if (served < 2 * CHUNK + 1000) {
          served += 64 * 1024;
          this.push(randomBytes(64 * 1024));
        } else {
          this.destroy(new Error('upload interrupted'));
        }
      },
    });
    await expect(blobs.put(failing)).rejects.toThrow('upload interrupted');
    expect(served).toBeGreaterThan(2 * CHUNK);
    expect([await count('blobs'), await count('blob_chunks')]).toEqual([blobsBefore, chunksBefore]);
    // The connection went back to the pool healthy: the store still works.
    const after = await blobs.put(streamOf(Buffer.from('after')));
    expect(after.bytes).toBe(5);
  });

  it('a database that refuses the upload rejects it and destroys the source', async () => {
    const down = new pg.Pool({ connectionString: 'postgres://svc@127.0.0.1:1/none' });
    const source = Readable.from([Buffer.from('never stored')]);
    await expect(new PgBlobStore(down).put(source)).rejects.toThrow();
    expect(source.destroyed).toBe(true);
    await down.end();
  });

  it('get of an unknown id throws BlobNotFoundError', async () => {
    const id = randomUUID();
    const error = await blobs.get(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobNotFoundError);
    expect(error).toMatchObject({ name: 'BlobNotFoundError', blobId: id });
  });

  it('remove deletes the blob and its chunks; removing it again is no error', async () => {
    const stored = await blobs.put(streamOf(randomBytes(CHUNK + 5)));
    await blobs.remove(stored.id);
    await expect(blobs.get(stored.id)).rejects.toBeInstanceOf(BlobNotFoundError);
    const left = await pool.query('SELECT count(*)::int AS n FROM blob_chunks WHERE blob_id = $1', [stored.id]);
    expect(left.rows[0].n).toBe(0);
    await blobs.remove(stored.id);
  });

  it('a blob removed while it is read ends the stream with BlobNotFoundError, never short', async () => {
    const stored = await blobs.put(streamOf(randomBytes(3 * CHUNK)));
    const stream = await blobs.get(stored.id);
    const reader = stream[Symbol.asyncIterator]();
    const first = await reader.next();
    expect((first.value as Buffer).length).toBe(CHUNK);
    await blobs.remove(stored.id);
    // The stream may hold one chunk read ahead; the one after it is gone.
    let received = CHUNK;
    const error = await (async () => {
      for (let next = await reader.next(); !next.done; next = await reader.next())
        received += (next.value as Buffer).length;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobNotFoundError);
    expect(received).toBeLessThan(3 * CHUNK);
  });

  it('refuses a chunk size beyond the schema bound', () => {
    expect(() => new PgBlobStore(pool, { chunkBytes: 2 * 1024 * 1024 })).toThrow(RangeError);
    expect(() => new PgBlobStore(pool, { chunkBytes: 0 })).toThrow(RangeError);
  });

  it('eight concurrent puts on a pool of three: each blob is whole and its own', async () => {
    const contents = Array.from({ length: 8 }, (_, i) => randomBytes(CHUNK * (i % 3) + 1000 * i + 1));
    const stored = await Promise.all(contents.map((data) => blobs.put(streamOf(data, 50_000))));
    expect(new Set(stored.map((s) => s.id)).size).toBe(8);
    const back = await Promise.all(stored.map(async (s) => readAll(await blobs.get(s.id))));
    back.forEach((data, i) => {
      expect(stored[i]).toMatchObject({ bytes: contents[i]!.length, sha256: sha256(contents[i]!) });
      expect(data.equals(contents[i]!)).toBe(true);
    });
  });
});
