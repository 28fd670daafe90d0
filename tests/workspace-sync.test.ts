/**
 * Workspace snapshots (docs/postgresql.md#workspace-snapshots) on a real PostgreSQL: a completed
 * run's workspace (without node_modules, .expo, .svc; with .git) is saved in the completion's
 * transaction and restored into an empty or older workspace on another worker; a newer local copy
 * is kept; a failed run's half-written file never reaches a snapshot nor the next run; a workspace
 * over the limit is not saved and a system message says so.
 *
 * The engine tests run the real engine with its two calls into `WorkspaceSync`, on a SQLite file
 * for the rows and PostgreSQL for the blobs and snapshots (the completion's transaction reaches
 * the PostgreSQL snapshot table through `tx.workspaces`): two stores, so those two writes are not
 * one transaction here as they are on the PostgreSQL store; what the engine does around them is.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '../src/logger.js';
import { PgBlobStore } from '../src/store/pg/blob-store.js';
import * as pgSchema from '../src/store/pg/schema.js';
import { PgWorkspaceRepo } from '../src/store/pg/workspace-repo.js';
import type { Tx } from '../src/store/port.js';
import { openStore, type Store } from '../src/store/store.js';
import { ArtifactPublisher } from '../src/workflows/artifact-publisher.js';
import { DiskArtifactStore } from '../src/workflows/disk-artifact-store.js';
import { WorkflowEngine } from '../src/workflows/workflow-engine.js';
import { WorkflowJournal } from '../src/workflows/workflow-journal.js';
import { WorkspaceSync, type CompletionHook } from '../src/workflows/workspace-sync.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

const T0 = '2026-01-01T00:00:00.000Z';

describe.skipIf(!postgresAvailable())('workspace snapshots', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let blobs: PgBlobStore;
  let workspaces: PgWorkspaceRepo;
  const blobIds = async () =>
    (await pool.query<{ id: string }>('SELECT id FROM blobs ORDER BY id')).rows.map((r) => r.id);

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    blobs = new PgBlobStore(pool);
    workspaces = new PgWorkspaceRepo(drizzle(pool, { schema: pgSchema }));
    await pool.query('INSERT INTO users (id, name, plan, created_at) VALUES ($1, $2, $3, $4)', [
      'u1',
      'alice',
      'free',
      T0,
    ]);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function pgProject(id = randomUUID()): Promise<string> {
    await pool.query(
      "INSERT INTO projects (id, owner_id, name, visibility, created_at, updated_at) VALUES ($1, 'u1', $1, 'private', $2, $2)",
      [id, T0],
    );
    return id;
  }

  describe('WorkspaceSync on its own', () => {
    /** A completion recorded in one PostgreSQL transaction: the version moves and the hook runs in it; `completes` false plays a lost lease. */
    function recordOn(projectId: string, completes = true) {
      return (hook: CompletionHook) =>
        drizzle(pool, { schema: pgSchema }).transaction(async (t) => {
          if (!completes) return false;
          const { rows } = await t.execute<{ v: number }>(
            sql`UPDATE projects SET workspace_version = workspace_version + 1 WHERE id = ${projectId} RETURNING workspace_version AS v`,
          );
          await hook({ workspaces: new PgWorkspaceRepo(t) } as unknown as Tx, rows[0]!.v);
          return true;
        });
    }
    const sync = (maxMb?: number) =>
      new WorkspaceSync({
        blobs,
        workspaces,
        journal: undefined as never,
        logger: silentLogger(),
        ...(maxMb !== undefined && { maxMb }),
      });
    const said: string[] = [];
    const say = async (text: string) => {
      said.push(text);
    };

    /** A workspace as a build leaves it. */
    function workspace(): string {
      const dir = join(tempDir('mbm-ws-'), 'project');
      mkdirSync(join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'App.tsx'), 'export default 1;');
      writeFileSync(join(dir, 'src', 'screen.tsx'), 'screen');
      mkdirSync(join(dir, '.git', 'refs'), { recursive: true });
      writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      for (const skipped of ['node_modules/pkg', '.expo', '.svc/web', 'src/node_modules']) {
        mkdirSync(join(dir, skipped), { recursive: true });
        writeFileSync(join(dir, skipped, 'big.js'), 'x');
      }
      symlinkSync('App.tsx', join(dir, 'app-link.tsx'));
      return dir;
    }

    it('a completed workspace is restored into an empty workspace elsewhere: .git kept, node_modules, .expo and .svc left out', async () => {
      const projectId = await pgProject();
      const dir = workspace();
      expect(await sync().complete({ id: 'w1', projectId }, dir, recordOn(projectId))).toBe(true);
      expect(await workspaces.snapshotOf(projectId)).toEqual({ version: 1, blobId: expect.any(String) });
      expect(readFileSync(`${dir}.version`, 'utf8').trim()).toBe('1');

      const elsewhere = join(tempDir('mbm-ws-'), 'project');
      await sync().restore(projectId, elsewhere, say);
      expect(readFileSync(join(elsewhere, 'App.tsx'), 'utf8')).toBe('export default 1;');
      expect(readFileSync(join(elsewhere, 'src', 'screen.tsx'), 'utf8')).toBe('screen');
      expect(readFileSync(join(elsewhere, '.git', 'HEAD'), 'utf8')).toContain('refs/heads/main');
      expect(readlinkSync(join(elsewhere, 'app-link.tsx'))).toBe('App.tsx');
      for (const skipped of ['node_modules', '.expo', '.svc', 'src/node_modules'])
        expect(existsSync(join(elsewhere, skipped)), skipped).toBe(false);
      expect(said.at(-1)).toMatch(/Restored the workspace .*version 1/);
      // In use now: the version comes back only with a completion.
      expect(existsSync(`${elsewhere}.version`)).toBe(false);
    });

    it('an older local copy is replaced, a newer one is kept; the replaced blob is removed', async () => {
      const projectId = await pgProject();
      const first = workspace();
      await sync().complete({ id: 'w1', projectId }, first, recordOn(projectId));
      const v1 = (await workspaces.snapshotOf(projectId))!.blobId;
      writeFileSync(join(first, 'App.tsx'), 'export default 2;');
      await sync().complete({ id: 'w2', projectId }, first, recordOn(projectId));
      const v2 = await workspaces.snapshotOf(projectId);
      expect(v2!.version).toBe(2);
      expect(await blobIds()).not.toContain(v1);

      // Older (version 1) with a file the project no longer has: replaced whole.
      const older = join(tempDir('mbm-ws-'), 'project');
      mkdirSync(older);
      writeFileSync(join(older, 'App.tsx'), 'export default 1;');
      writeFileSync(join(older, 'stale.txt'), 'stale');
      writeFileSync(`${older}.version`, '1\n');
      await sync().restore(projectId, older, say);
      expect(readFileSync(join(older, 'App.tsx'), 'utf8')).toBe('export default 2;');
      expect(existsSync(join(older, 'stale.txt'))).toBe(false);

      // As new as the snapshot (this worker completed it): kept as it is.
      writeFileSync(join(first, 'local-only.txt'), 'mine');
      await sync().restore(projectId, first, say);
      expect(readFileSync(join(first, 'local-only.txt'), 'utf8')).toBe('mine');
    });

    it('half-restored folders a killed worker left are removed at start', async () => {
      const root = tempDir('mbm-ws-');
      for (const name of ['.restore-p-1', '.replaced-p-2', 'p']) mkdirSync(join(root, name));
      expect(await sync().removeTemporary(root)).toBe(2);
      expect(existsSync(join(root, 'p'))).toBe(true);
      expect(existsSync(join(root, '.restore-p-1'))).toBe(false);
    });

    it('a completion that is not recorded (lease lost) leaves no snapshot and no blob', async () => {
      const projectId = await pgProject();
      const before = await blobIds();
      expect(await sync().complete({ id: 'w1', projectId }, workspace(), recordOn(projectId, false))).toBe(false);
      expect(await workspaces.snapshotOf(projectId)).toBeNull();
      expect(await blobIds()).toEqual(before);
    });
  });

  describe('through the engine', () => {
    let store: Store;
    let journal: WorkflowJournal;
    const builder = new ManualBuilder();
    let engine: WorkflowEngine | undefined;
    let projectId: string;

    beforeAll(async () => {
      // The rows' store: a transaction that reaches PostgreSQL spans I/O, which is expected here (see the file comment).
      const sqlite = await openStore({
        file: join(tempDir('mbm-rows-'), 'store.db'),
        strictTransactions: false,
        onTransactionSpan: () => {},
      });
      store = {
        ...sqlite,
        dialect: sqlite.dialect,
        inMemory: sqlite.inMemory,
        repos: sqlite.repos,
        events: sqlite.events,
        rateWindows: sqlite.rateWindows,
        blobs,
        transaction: (fn) =>
          sqlite.transaction((tx) =>
            fn(
              Object.create(tx, {
                workspaces: { value: new PgWorkspaceRepo(drizzle(pool, { schema: pgSchema })) },
              }) as Tx,
            ),
          ),
        clockOffsetMs: () => 0,
        ping: () => sqlite.ping(),
        close: () => sqlite.close(),
      };
      journal = new WorkflowJournal(store, systemClock, silentLogger());
      projectId = await pgProject();
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
    });
    afterEach(async () => {
      await engine?.shutdown();
      engine = undefined;
    });
    afterAll(() => store?.close());

    /** Starts a worker (an engine of its own) on `dataDir`, with `snapshots` as its blob store (default the test's). */
    async function worker(dataDir: string, maxMb?: number, snapshots: PgBlobStore = blobs): Promise<WorkflowEngine> {
      const logger = silentLogger();
      const artifactStore = new DiskArtifactStore(dataDir);
      const sync = new WorkspaceSync({
        blobs: snapshots,
        workspaces,
        journal,
        logger,
        ...(maxMb !== undefined && { maxMb }),
      });
      engine = new WorkflowEngine(
        {
          store,
          journal,
          artifactStore,
          publisher: new ArtifactPublisher({ store, artifactStore, plans: GENEROUS_PLANS, clock: systemClock, logger }),
          builder,
          plans: GENEROUS_PLANS,
          dataDir,
          logger,
          clock: systemClock,
          workspaceSync: sync,
        },
        { maxConcurrent: 1, pollIntervalMs: 3_600_000 },
      );
      await engine.start();
      return engine;
    }

    /** Queues a build and waits until its builder waits for the test. */
    async function build(on: WorkflowEngine) {
      const id = randomUUID();
      await store.transaction(async (tx) => {
        await tx.workflows.insert({
          id,
          projectId,
          seq: await tx.workflows.nextSeq(),
          kind: 'build',
          status: 'queued',
          instruction: 'build',
          stepIndex: 0,
          stepTotal: 0,
          stepName: null,
          runnerId: null,
          leaseExpiresAt: null,
          errorCode: null,
          errorMessage: null,
          createdAt: new Date().toISOString(),
          startedAt: null,
          finishedAt: null,
        });
      });
      on.schedulePump();
      const run = await waitFor(
        () => {
          const r = builder.runOf(id);
          return r?.idle ? r : null;
        },
        10_000,
        'the build to start',
      );
      return { id, run, dir: run.job.workspaceDir };
    }
    const statusOf = async (id: string) => (await store.repos.workflows.findById(id))!.status;
    const ended = (id: string) =>
      waitFor(
        async () => ((await statusOf(id)) === 'completed' || (await statusOf(id)) === 'failed' ? statusOf(id) : null),
        10_000,
        `${id} to end`,
      );
    const messages = async () => (await store.repos.messages.list(projectId, 0, 500)).map((m) => m.content);

    it("a failed run's half-written file reaches neither the snapshot nor the next run on any worker", async () => {
      const dirA = tempDir('mbm-worker-a-');
      const dirB = tempDir('mbm-worker-b-');
      // Worker A completes a build.
      let first = await build(await worker(dirA));
      writeFileSync(join(first.dir, 'App.tsx'), 'good');
      first.run.finish();
      expect(await ended(first.id)).toBe('completed');
      const saved = await workspaces.snapshotOf(projectId);
      expect(saved?.version).toBe(1);
      await engine!.shutdown();

      // Worker B starts from it, writes half a change, and fails.
      const second = await build(await worker(dirB));
      expect(readFileSync(join(second.dir, 'App.tsx'), 'utf8')).toBe('good');
      writeFileSync(join(second.dir, 'half-written.tsx'), 'half');
      second.run.fail();
      expect(await ended(second.id)).toBe('failed');
      expect(await workspaces.snapshotOf(projectId)).toEqual(saved);
      expect((await messages()).some((m) => /Restored the workspace/.test(m))).toBe(true);

      // The next run on B starts from the last completed state, and so does one on A.
      const third = await build(engine!);
      expect(existsSync(join(third.dir, 'half-written.tsx'))).toBe(false);
      expect(readFileSync(join(third.dir, 'App.tsx'), 'utf8')).toBe('good');
      third.run.fail();
      await ended(third.id);
      await engine!.shutdown();
      first = await build(await worker(dirA));
      expect(existsSync(join(first.dir, 'half-written.tsx'))).toBe(false);
      expect(readFileSync(join(first.dir, 'App.tsx'), 'utf8')).toBe('good');
      first.run.finish();
      expect(await ended(first.id)).toBe('completed');
      expect((await workspaces.snapshotOf(projectId))?.version).toBe(2);
    });

    it('a snapshot that cannot be uploaded: the run completes, a system message says so, the last snapshot stays', async () => {
      /** The database refuses uploads (downloads still work, so the claim's restore does). */
      class RefusingUploads extends PgBlobStore {
        override put(): never {
          throw new Error('connection terminated');
        }
      }
      const before = await workspaces.snapshotOf(projectId);
      const { id, run } = await build(await worker(tempDir('mbm-worker-d-'), undefined, new RefusingUploads(pool)));
      run.finish();
      expect(await ended(id)).toBe('completed');
      expect(await workspaces.snapshotOf(projectId)).toEqual(before);
      const rows = await store.repos.messages.list(projectId, 0, 500);
      expect(
        rows.some(
          (m) => m.workflowId === id && m.role === 'system' && /could not be saved to the database/.test(m.content),
        ),
      ).toBe(true);
    });

    it('a workspace over the limit is not saved: the run completes and a system message says so', async () => {
      const before = await workspaces.snapshotOf(projectId);
      const { id, run, dir } = await build(await worker(tempDir('mbm-worker-c-'), 0.01));
      writeFileSync(join(dir, 'big.bin'), Buffer.alloc(64 * 1024, 1));
      run.finish();
      expect(await ended(id)).toBe('completed');
      expect(await workspaces.snapshotOf(projectId)).toEqual(before);
      const rows = await store.repos.messages.list(projectId, 0, 500);
      const note = rows.findIndex((m) => m.workflowId === id && /over the 0\.0 MiB snapshot limit/.test(m.content));
      expect(note).toBeGreaterThan(-1);
      expect(rows[note]!.role).toBe('system');
      expect(rows[note + 1]!.content).toBe('Build completed.');
      // The version file is written just after the completion's commit: wait for it, not the status.
      await waitFor(() => existsSync(`${dir}.version`), undefined, 'the workspace version file');
      expect(lstatSync(`${dir}.version`).isFile()).toBe(true);
    });
  });
});
