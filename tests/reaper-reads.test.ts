/**
 * What the reaper reads at each tick (docs/workflows.md "Leases"): only the workflows it can take
 * over and one lease end per other live runner, never every active workflow of the store. The real
 * service (`createApp`) and its engine on SQLite and on PostgreSQL, with many running workflows of
 * a runner on another host (its pids mean nothing here: only its leases count) and one whose lease
 * ended. The repository's two reads are watched (their answers recorded, not changed).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, type App, type AppConfig } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import type { LeaseEnd } from '../src/store/repos.js';
import type { WorkflowRow } from '../src/store/rows.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

/** Running workflows of the other runner whose leases are live. */
const LIVE = 200;
const ELSEWHERE = 'elsewhere-host:4242:n0nce';

let database: Promise<TestDatabase> | undefined;
afterAll(async () => (await database)?.drop());

/** The stores the engine runs on: the config that points `createApp` at each (null: not in this run). */
const STORES: [string, () => Promise<Partial<AppConfig> | null>][] = [
  ['sqlite', async () => ({})],
  [
    'postgres',
    async () => {
      if (!postgresAvailable()) return null;
      database ??= createTestDatabase();
      return { databaseUrl: (await database).url };
    },
  ],
];

/** Stores a project of `ownerId` and its running workflow, held by `runnerId` until `leaseExpiresAt`. */
async function storeRunning(app: App, ownerId: string, runnerId: string, leaseExpiresAt: number): Promise<string> {
  const projectId = randomUUID();
  const id = randomUUID();
  const at = new Date().toISOString();
  await app.store.transaction(async (tx) => {
    await tx.projects.insert({
      id: projectId,
      ownerId,
      name: `p-${projectId.slice(0, 8)}`,
      description: null,
      visibility: 'private',
      createdAt: at,
      updatedAt: at,
      messageSeq: 0,
      deploymentSeq: 0,
      workspaceVersion: 0,
    });
    await tx.workflows.insert({
      id,
      projectId,
      seq: await tx.workflows.nextSeq(),
      kind: 'build',
      status: 'running',
      instruction: 'build it',
      stepIndex: 0,
      stepTotal: 0,
      stepName: null,
      runnerId,
      leaseExpiresAt,
      errorCode: null,
      errorMessage: null,
      createdAt: at,
      startedAt: at,
      finishedAt: null,
    });
  });
  return id;
}

describe.each(STORES)('the reaper on %s', (_name, storeConfig) => {
  it('with many live leases of another runner and one that ended, each tick reads one lease end and only the expired workflow, and takes over exactly that one', async (ctx) => {
    const config = await storeConfig();
    if (!config) return ctx.skip();
    const app = await createApp({
      dataDir: tempDir('mbm-reaper-reads-'),
      logger: silentLogger(),
      builderInstance: new ManualBuilder(),
      // Ticks: the reads of several of them are checked.
      pollIntervalMs: 100,
      plans: GENEROUS_PLANS,
      ...config,
    });
    try {
      const { userId } = await app.tokens.authenticate((await app.tokens.create('alice')).token);
      const now = Date.now() + app.store.clockOffsetMs();
      const live: string[] = [];
      for (let i = 0; i < LIVE; i++) live.push(await storeRunning(app, userId, ELSEWHERE, now + 600_000 + i));
      const expired = await storeRunning(app, userId, ELSEWHERE, now - 1);

      const repo = app.store.repos.workflows;
      const leaseReads: LeaseEnd[][] = [];
      const candidateReads: WorkflowRow[][] = [];
      const liveLeaseEnds = repo.liveLeaseEnds.bind(repo);
      const takeoverCandidates = repo.takeoverCandidates.bind(repo);
      repo.liveLeaseEnds = async (...args) => {
        const rows = await liveLeaseEnds(...args);
        leaseReads.push(rows);
        return rows;
      };
      repo.takeoverCandidates = async (...args) => {
        const rows = await takeoverCandidates(...args);
        candidateReads.push(rows);
        return rows;
      };

      // The start's reap (recovery), then ticks.
      await app.start();
      await waitFor(() => candidateReads.length >= 3, 15_000, 'three reaps');
      expect(candidateReads[0]!.map((row) => row.id)).toEqual([expired]);
      for (const rows of candidateReads.slice(1)) expect(rows).toEqual([]);
      for (const rows of leaseReads) expect(rows).toEqual([{ runnerId: ELSEWHERE, leaseEnd: now + 600_000 }]);

      expect(await repo.findById(expired)).toMatchObject({
        status: 'failed',
        errorCode: 'interrupted',
        runnerId: null,
      });
      expect(await repo.countByStatus()).toMatchObject({ running: LIVE, failed: 1 });
      for (const id of [live[0]!, live[LIVE - 1]!])
        expect(await repo.findById(id)).toMatchObject({ status: 'running', runnerId: ELSEWHERE });
    } finally {
      await app.close();
    }
  });
});
