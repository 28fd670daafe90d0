/**
 * Artifacts as blobs with a per-node read-through cache (docs/postgresql.md#artifacts), on a real
 * PostgreSQL: what node A imports, node B (its own data dir) serves byte for byte; concurrent
 * first reads on a node download once; the cache evicts the least recently read artifacts over its
 * limit; links are refused as on disk; and the publisher records the blob in the artifact row,
 * removes it with the row (retention), and leaves nothing when the row is not recorded.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/logger.js';
import { PgBlobStore } from '../src/store/pg/blob-store.js';
import type { ArtifactRow } from '../src/store/rows.js';
import { openStore, type Store } from '../src/store/store.js';
import { ArtifactPublisher } from '../src/workflows/artifact-publisher.js';
import { BlobArtifactStore } from '../src/workflows/blob-artifact-store.js';
import { GENEROUS_PLANS, tempDir } from './helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

const T0 = '2026-01-01T00:00:00.000Z';

/** A blob store that counts the downloads it starts (the real one underneath). */
class CountingBlobStore extends PgBlobStore {
  gets = 0;
  override get(id: string): Promise<Readable> {
    this.gets++;
    return super.get(id);
  }
}

/** Every file under `dir`, by relative path, with its SHA-256. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

describe.skipIf(!postgresAvailable())('artifacts in blobs, served by any node', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let blobs: CountingBlobStore;
  const rows = new Map<string, Pick<ArtifactRow, 'id' | 'blobId'>>();
  /** The artifact rows as every node reads them (the rows' table stands for the store's). */
  const artifacts = { findById: async (id: string) => rows.get(id) as ArtifactRow | undefined };
  const node = (cacheMb?: number) =>
    new BlobArtifactStore({
      dataDir: tempDir('mbm-node-'),
      blobs,
      artifacts,
      ...(cacheMb !== undefined && { cacheMb }),
    });
  const blobCount = async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM blobs')).rows[0]!.n;

  /** A folder of `files` (path -> content) to publish. */
  function source(files: Record<string, Buffer | string>): string {
    const dir = tempDir('mbm-publish-');
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    return dir;
  }

  /** Imports `dir` on `store` as a new artifact and records its row. */
  async function publish(store: BlobArtifactStore, dir: string): Promise<string> {
    const id = randomUUID();
    const imported = await store.importFolder(id, dir);
    expect(imported.blobId).toMatch(/^[0-9a-f-]{36}$/);
    rows.set(id, { id, blobId: imported.blobId });
    return id;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    blobs = new CountingBlobStore(pool, { chunkBytes: 64 * 1024 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('what node A imports, node B serves byte for byte from its own cache', async () => {
    const dir = source({
      'index.html': '<h1>hello</h1>',
      'assets/app.js': randomBytes(300_000),
      'assets/deep/x.bin': randomBytes(7),
      'empty.txt': '',
    });
    const a = node();
    const b = node();
    const id = await publish(a, dir);
    const served = await b.localDir(id);
    expect(served).toBe(join(b.cacheRoot, id));
    expect(filesOf(served)).toEqual(filesOf(dir));
    const file = await b.resolveFile(id, 'assets/app.js');
    expect(readFileSync(file!).equals(readFileSync(join(dir, 'assets/app.js')))).toBe(true);
    expect(await b.resolveFile(id, '')).toBe(join(served, 'index.html'));
    expect(await b.resolveFile(id, '../../etc/passwd')).toBeNull();
    // An unknown artifact, or one without files, is nothing to serve.
    expect(await b.resolveFile(randomUUID(), 'index.html')).toBeNull();
  });

  it('concurrent first reads on a node download the blob once; later reads use the cache', async () => {
    const id = await publish(node(), source({ 'index.html': randomBytes(200_000) }));
    const b = node();
    const before = blobs.gets;
    const dirs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? b.localDir(id) : b.resolveFile(id, 'index.html'))),
    );
    expect(blobs.gets - before).toBe(1);
    expect(new Set(dirs.map((d) => d!.replace(/\/index\.html$/, ''))).size).toBe(1);
    await b.localDir(id);
    expect(blobs.gets - before).toBe(1);
    // No temporary folder is left behind.
    expect(readdirSync(b.cacheRoot).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('a cached folder another process on the data dir removed is fetched again', async () => {
    const id = await publish(node(), source({ 'index.html': 'again' }));
    const b = node();
    const dir = await b.localDir(id);
    rmSync(dir, { recursive: true });
    const before = blobs.gets;
    expect(readFileSync((await b.resolveFile(id, 'index.html'))!, 'utf8')).toBe('again');
    expect(blobs.gets - before).toBe(1);
  });

  it('evicts the least recently read artifacts once the cache is over its limit', async () => {
    const a = node();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await publish(a, source({ 'data.bin': randomBytes(400 * 1024) })));
    const [first, second, third] = ids as [string, string, string];
    const b = node(1); // 1 MiB: two artifacts fit, three do not
    await b.localDir(first);
    await b.localDir(second);
    await b.localDir(third);
    expect(existsSync(join(b.cacheRoot, first))).toBe(false);
    expect(existsSync(join(b.cacheRoot, second))).toBe(true);
    expect(existsSync(join(b.cacheRoot, third))).toBe(true);
    expect(b.cachedBytes()).toBeLessThanOrEqual(1024 * 1024);
    // Reading `second` makes `third` the least recent: fetching `first` again evicts `third`.
    await b.localDir(second);
    const before = blobs.gets;
    expect(readFileSync(join(await b.localDir(first), 'data.bin')).length).toBe(400 * 1024);
    expect(blobs.gets - before).toBe(1);
    expect(existsSync(join(b.cacheRoot, second))).toBe(true);
    expect(existsSync(join(b.cacheRoot, third))).toBe(false);
  });

  it('a node that restarts counts what its cache holds (oldest first) and removes half-unpacked folders', async () => {
    const a = node();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await publish(a, source({ 'data.bin': randomBytes(400 * 1024) })));
    const dataDir = tempDir('mbm-node-');
    const before = new BlobArtifactStore({ dataDir, blobs, artifacts, cacheMb: 2 });
    for (const id of ids) await before.localDir(id);
    mkdirSync(join(before.cacheRoot, '.tmp-killed-download'));
    const after = new BlobArtifactStore({ dataDir, blobs, artifacts, cacheMb: 1 });
    expect(await after.removeTemporary()).toBe(1);
    const gets = blobs.gets;
    await after.localDir(ids[0]!);
    expect(blobs.gets).toBe(gets);
    expect(after.cachedBytes()).toBe(3 * 400 * 1024);
    // A new entry brings it over 1 MiB: the least recently read folder it found goes (ids[0] was just read).
    await after.localDir(await publish(a, source({ 'data.bin': randomBytes(100 * 1024) })));
    expect(existsSync(join(after.cacheRoot, ids[1]!))).toBe(false);
    expect(existsSync(join(after.cacheRoot, ids[0]!))).toBe(true);
    expect(existsSync(join(after.cacheRoot, ids[2]!))).toBe(true);
  });

  it('refuses links as the disk store does: a link out of the folder is reported and never packed', async () => {
    const dir = source({ 'index.html': 'ok' });
    symlinkSync('/etc/passwd', join(dir, 'passwd'));
    symlinkSync('index.html', join(dir, 'copy.html'));
    const a = node();
    const id = randomUUID();
    const imported = await a.importFolder(id, dir);
    expect(imported.refused).toEqual(['passwd -> (absolute path …/passwd)']);
    rows.set(id, { id, blobId: imported.blobId });
    const served = await node().localDir(id);
    expect(Object.keys(filesOf(served)).sort()).toEqual(['copy.html', 'index.html']);
  });

  describe('through the publisher', () => {
    let store: Store;
    let publisher: ArtifactPublisher;
    let nodeA: BlobArtifactStore;
    let ticks = 0;
    const projectId = randomUUID();

    beforeAll(async () => {
      store = await openStore({ file: join(tempDir('mbm-rows-'), 'store.db') });
      await store.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
      await store.repos.projects.insert({
        id: projectId,
        ownerId: 'u1',
        name: 'p',
        description: null,
        visibility: 'private',
        createdAt: T0,
        updatedAt: T0,
        messageSeq: 0,
        deploymentSeq: 0,
        workspaceVersion: 0,
      });
      await store.repos.workflows.insert({
        id: 'w1',
        projectId,
        seq: 1,
        kind: 'build',
        status: 'running',
        instruction: 'x',
        stepIndex: 0,
        stepTotal: 0,
        stepName: null,
        runnerId: null,
        leaseExpiresAt: null,
        errorCode: null,
        errorMessage: null,
        createdAt: T0,
        startedAt: null,
        finishedAt: null,
      });
      nodeA = new BlobArtifactStore({ dataDir: tempDir('mbm-node-'), blobs, artifacts: store.repos.artifacts });
      publisher = new ArtifactPublisher({
        store,
        artifactStore: nodeA,
        plans: GENEROUS_PLANS,
        clock: () => new Date(Date.parse(T0) + ++ticks * 1000),
        logger: silentLogger(),
        previewsKept: 1,
      });
    });
    afterAll(() => store?.close());

    it('records the blob in the row, and retention removes the row and its blob', async () => {
      const first = await publisher.publish(projectId, 'w1', {
        kind: 'preview',
        platform: 'web',
        sourceDir: source({ 'index.html': 'one' }),
      });
      const row = await store.repos.artifacts.findById(first.published.id);
      expect(row?.blobId).toMatch(/^[0-9a-f-]{36}$/);
      const other = new BlobArtifactStore({ dataDir: tempDir('mbm-node-'), blobs, artifacts: store.repos.artifacts });
      expect(readFileSync((await other.resolveFile(row!.id, 'index.html'))!, 'utf8')).toBe('one');
      const blobsBefore = await blobCount();
      await publisher.publish(projectId, 'w1', {
        kind: 'preview',
        platform: 'web',
        sourceDir: source({ 'index.html': 'two' }),
      });
      expect(await store.repos.artifacts.findById(row!.id)).toBeUndefined();
      expect((await pool.query('SELECT 1 FROM blobs WHERE id = $1', [row!.blobId])).rowCount).toBe(0);
      expect(await blobCount()).toBe(blobsBefore);
      expect(existsSync(join(nodeA.cacheRoot, row!.id))).toBe(false);
    });

    it('a publication whose row is not recorded leaves no blob and no cached folder', async () => {
      const blobsBefore = await blobCount();
      const cachedBefore = readdirSync(nodeA.cacheRoot).sort();
      const refusal = new Error('lease lost');
      await expect(
        publisher.publish(
          projectId,
          'w1',
          { kind: 'deployment', platform: 'web', sourceDir: source({ 'index.html': 'three' }) },
          async () => {
            throw refusal;
          },
        ),
      ).rejects.toBe(refusal);
      expect(await blobCount()).toBe(blobsBefore);
      expect(readdirSync(nodeA.cacheRoot).sort()).toEqual(cachedBefore);
    });
  });
});
