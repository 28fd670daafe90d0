/**
 * The engine on PostgreSQL (docs/workflows.md, "Leases"): a claim's run is in the engine's table
 * before its transaction commits (its slot is held), and on PostgreSQL other statements of this
 * process run beside that transaction; the heartbeat must not take the uncommitted claim for a
 * lost lease. The real service (`createApp` with a database URL) and the manual builder; nothing
 * ticks (the poll interval is an hour), the heartbeat runs every 20 ms.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

describe.skipIf(!postgresAvailable())('engine claims on PostgreSQL', () => {
  let database: TestDatabase;
  let app: App | undefined;
  const builder = new ManualBuilder();
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const run of builder.live()) run.fail('test over');
    await app?.close();
    await database?.drop();
  });

  it('a heartbeat during a claim that has not committed yet leaves the claimed run alone', async () => {
    app = await createApp({
      dataDir: tempDir('mbm-pg-claims-'),
      databaseUrl: database.url,
      logger: silentLogger(),
      builderInstance: builder,
      pollIntervalMs: 3_600_000,
      heartbeatMs: 20,
      maxConcurrentWorkflows: 2,
      plans: GENEROUS_PLANS,
    });
    await app.start();
    const engine = app.engine;
    const store = app.store;
    const caller = await app.tokens.authenticate((await app.tokens.create('alice')).token);
    // A runs: its lease is renewed by every heartbeat.
    const first = await app.workflows.send(caller, { projectId: (await app.projects.create(caller, { name: 'A' })).id, message: 'build a', kind: 'build' });
    expect(first.status).toBe('running');
    const runA = await waitFor(() => (builder.runOf(first.workflowId)?.idle ? builder.runOf(first.workflowId) : null), 10_000, 'A to run');
    // B is stored queued without a notice, so nothing claims it until the test's transaction does.
    const projectB = (await app.projects.create(caller, { name: 'B' })).id;
    const second = randomUUID();
    await store.transaction(async (tx) => {
      await tx.workflows.insert({
        id: second, projectId: projectB, seq: await tx.workflows.nextSeq(), kind: 'build', status: 'queued', instruction: 'build b', stepIndex: 0, stepTotal: 0, stepName: null,
        runnerId: null, leaseExpiresAt: null, errorCode: null, errorMessage: null, createdAt: new Date().toISOString(), startedAt: null, finishedAt: null,
      });
    });
    const leaseOfA = async (tx: Parameters<Parameters<typeof store.transaction>[0]>[0]) => (await tx.workflows.findById(first.workflowId))!.leaseExpiresAt;
    const starts = await store.transaction(async (tx) => {
      const claims = await engine.offer(tx);
      expect(claims.started(second)).toBe(true);
      // Three renewals of A (committed, so this transaction reads them): at least one heartbeat
      // began after B's claim and went over B too.
      let seen = await leaseOfA(tx);
      for (let changes = 0; changes < 3; ) {
        const now = await leaseOfA(tx);
        if (now !== seen) changes++;
        seen = now;
      }
      return claims;
    });
    starts.launch();
    const runB = await waitFor(() => (builder.runOf(second)?.idle ? builder.runOf(second) : null), 10_000, 'B to run');
    expect(runB.job.signal.aborted).toBe(false);
    runB.finish();
    runA.finish();
    await waitFor(async () => (await store.repos.workflows.findById(second))?.status === 'completed', 10_000, 'B to complete');
  });
});
