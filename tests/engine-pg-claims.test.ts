/**
 * The engine on PostgreSQL (docs/workflows.md, "Leases"): a claim's run is in the engine's table
 * before its transaction commits (its slot is held), and on PostgreSQL other statements of this
 * process run beside that transaction; the heartbeat must not take the uncommitted claim for a
 * lost lease. A transaction that PostgreSQL rolls back for a deadlock runs again (docs/postgresql.md,
 * "The store"): the claims of the attempt that was rolled back must be given back, never launched
 * nor left holding a slot. The real service (`createApp` with a database URL) and the manual
 * builder; nothing ticks (the poll interval is an hour). A trigger plays the deadlock: it fails an
 * insert of a "started" message (a claim's) with SQLSTATE 40P01, once; or another statement
 * failure (a build whose write fails records a fixed message, never the SQL).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
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

  /** Makes the `nth` insert from now of a message `LIKE pattern` fail with SQLSTATE `state` (default a deadlock, 40P01), once. */
  async function deadlockOnce(nth: number, pattern = '% started%', state = '40P01'): Promise<void> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // A sequence is not rolled back: only the first such insert fails, the retry gets past it.
      await client.query(`
        DROP SEQUENCE IF EXISTS test_deadlocks;
        CREATE SEQUENCE test_deadlocks;
        CREATE OR REPLACE FUNCTION test_deadlock_once() RETURNS trigger AS $$
        BEGIN
          IF NEW.content LIKE '${pattern}' THEN
            IF nextval('test_deadlocks') = ${nth} THEN
              RAISE EXCEPTION 'failure played by the test' USING ERRCODE = '${state}';
            END IF;
          END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql;
        DROP TRIGGER IF EXISTS test_deadlock_once ON messages;
        CREATE TRIGGER test_deadlock_once BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_deadlock_once();`);
    } finally {
      await client.end();
    }
  }

  /** Starts the service (closing the one before) with `slots` build slots. */
  async function startApp(slots: number, heartbeatMs?: number): Promise<App> {
    for (const run of builder.live()) run.fail('test over');
    await app?.close();
    app = await createApp({
      dataDir: tempDir('mbm-pg-claims-'),
      databaseUrl: database.url,
      logger: silentLogger(),
      builderInstance: builder,
      pollIntervalMs: 3_600_000,
      ...(heartbeatMs !== undefined && { heartbeatMs }),
      maxConcurrentWorkflows: slots,
      plans: GENEROUS_PLANS,
    });
    await app.start();
    return app;
  }

  /** Stores a queued build of `projectId` without a notice: nothing claims it until the engine pumps. */
  async function queueQuietly(projectId: string): Promise<string> {
    const id = randomUUID();
    await app!.store.transaction(async (tx) => {
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
    return id;
  }

  const idleRun = (id: string) =>
    waitFor(() => (builder.runOf(id)?.idle ? builder.runOf(id) : null), 10_000, `the build of ${id} to run`);

  it('a pump whose transaction is retried after a deadlock launches each claimed build once', async () => {
    const app = await startApp(2);
    const caller = await app.tokens.authenticate((await app.tokens.create('carol')).token);
    const ids = [
      await queueQuietly((await app.projects.create(caller, { name: 'One' })).id),
      await queueQuietly((await app.projects.create(caller, { name: 'Two' })).id),
    ];
    // The first attempt claims the first build, then fails on the second claim's message.
    await deadlockOnce(2);
    app.engine.schedulePump();
    for (const id of ids) (await idleRun(id)).finish();
    for (const id of ids)
      await waitFor(
        async () => (await app.store.repos.workflows.findById(id))?.status === 'completed',
        10_000,
        'the builds to complete',
      );
    expect(ids.map((id) => builder.runs.filter((r) => r.job.workflowId === id).length)).toEqual([1, 1]);
    // Both slots are free again: two more builds start at once.
    const more = [
      await queueQuietly((await app.projects.create(caller, { name: 'Three' })).id),
      await queueQuietly((await app.projects.create(caller, { name: 'Four' })).id),
    ];
    app.engine.schedulePump();
    for (const id of more) (await idleRun(id)).finish();
  });

  it("a build that fails on a database statement records a fixed message, never the statement's SQL", async () => {
    const app = await startApp(1);
    const caller = await app.tokens.authenticate((await app.tokens.create('erin')).token);
    const projectId = (await app.projects.create(caller, { name: 'Lost' })).id;
    const sent = await app.workflows.send(caller, { projectId, message: 'build it', kind: 'build' });
    const run = await idleRun(sent.workflowId);
    // The step's message fails as a statement cancelled by statement_timeout would (57014).
    await deadlockOnce(1, '%: boom', '57014');
    run.step('boom');
    await waitFor(
      async () => (await app.store.repos.workflows.findById(sent.workflowId))?.status === 'failed',
      10_000,
      'the build to fail',
    );
    const row = (await app.store.repos.workflows.findById(sent.workflowId))!;
    expect(row).toMatchObject({
      errorCode: 'builder_error',
      errorMessage:
        'The server lost contact with its database during this workflow. Send the instruction again to retry.',
    });
    const messages = (await app.workflows.messages(caller, { projectId })).messages.map((m) => m.content);
    expect(messages.at(-1)).toBe(
      'Build failed: The server lost contact with its database during this workflow. Send the instruction again to retry.',
    );
    expect(messages.join('\n')).not.toMatch(/Failed query|insert into|params:/i);
  });

  it('a heartbeat during a claim that has not committed yet leaves the claimed run alone', async () => {
    const app = await startApp(2, 20);
    const engine = app.engine;
    const store = app.store;
    const caller = await app.tokens.authenticate((await app.tokens.create('alice')).token);
    // A runs: its lease is renewed by every heartbeat.
    const first = await app.workflows.send(caller, {
      projectId: (await app.projects.create(caller, { name: 'A' })).id,
      message: 'build a',
      kind: 'build',
    });
    expect(first.status).toBe('running');
    const runA = await idleRun(first.workflowId);
    // B is stored queued without a notice, so nothing claims it until the test's transaction does.
    const second = await queueQuietly((await app.projects.create(caller, { name: 'B' })).id);
    const leaseOfA = async (tx: Parameters<Parameters<typeof store.transaction>[0]>[0]) =>
      (await tx.workflows.findById(first.workflowId))!.leaseExpiresAt;
    const starts = await store.transaction(async (tx) => {
      const claims = await engine.offer(tx);
      expect(claims.started(second)).toBe(true);
      // Three renewals of A (committed, so this transaction reads them): at least one heartbeat
      // began after B's claim and went over B too.
      let seen = await leaseOfA(tx);
      for (let changes = 0; changes < 3;) {
        const now = await leaseOfA(tx);
        if (now !== seen) changes++;
        seen = now;
      }
      return claims;
    });
    starts.launch();
    const runB = await idleRun(second);
    expect(runB.job.signal.aborted).toBe(false);
    runB.finish();
    runA.finish();
    await waitFor(
      async () => (await store.repos.workflows.findById(second))?.status === 'completed',
      10_000,
      'B to complete',
    );
  });
});
