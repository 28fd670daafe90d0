/**
 * The engine across nodes (docs/workflows.md "Change notices", "Nodes that claim nothing"): two or
 * three whole services (`createApp`) on one store, each with its own store connection, runner host
 * and manual builder, as separate processes sharing it would be. No node ticks (the poll interval
 * is an hour) unless a test says so: what one node does reaches the others only through the
 * store's change notices and resets (SQLite: `PRAGMA data_version`), so these tests fail when a
 * wake-up is missing. Tests wait on states, never on time.
 *
 * `STORES` names the stores the suite runs on: each gives the config that points a node at a
 * shared store (SQLite: the data dir's file; PostgreSQL, once `createApp` takes a database URL:
 * the same database for every node).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App, type AppConfig } from '../src/app.js';
import type { Caller } from '../src/auth/caller.js';
import { silentLogger } from '../src/logger.js';
import type { WorkflowRow } from '../src/store/rows.js';
import { openStore } from '../src/store/store.js';
import { ArtifactPublisher } from '../src/workflows/artifact-publisher.js';
import { newRunnerIdentity } from '../src/workflows/runner-identity.js';
import { WorkflowEngine } from '../src/workflows/workflow-engine.js';
import { WorkflowJournal } from '../src/workflows/workflow-journal.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder, type ManualRun } from './manual-builder.js';

/** A store the nodes share: the config each node gets for it. */
interface SharedStore {
  name: string;
  config(dataDir: string): Partial<AppConfig>;
}

const STORES: SharedStore[] = [{ name: 'sqlite', config: () => ({}) }];

/** One node: a whole service with its own runner host and builder. */
interface Node {
  app: App;
  builder: ManualBuilder;
  host: string;
  crashed: boolean;
}

const started: Node[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const node of started.splice(0).reverse()) {
    // A crashed node's store is closed: only its engine's timers and builds are left to stop.
    if (node.crashed) {
      await node.app.engine.shutdown().catch(() => undefined);
      continue;
    }
    for (const run of node.builder.live()) run.fail('test over');
    await node.app.close();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.each(STORES)('nodes on one $name store', (shared) => {
  const newDataDir = () => {
    const dir = tempDir('mbm-nodes-');
    dirs.push(dir);
    return dir;
  };

  /** Starts a node on `dataDir` whose runner host is `host` (another host: its pids mean nothing here). */
  async function startNode(dataDir: string, host: string, config: Partial<AppConfig> = {}): Promise<Node> {
    const builder = new ManualBuilder();
    const before = process.env.SVC_RUNNER_HOST;
    process.env.SVC_RUNNER_HOST = host;
    let app: App;
    try {
      app = await createApp({
        dataDir,
        logger: silentLogger(),
        builderInstance: builder,
        pollIntervalMs: 3_600_000,
        maxConcurrentWorkflows: 2,
        plans: GENEROUS_PLANS,
        ...shared.config(dataDir),
        ...config,
      });
    } finally {
      if (before === undefined) delete process.env.SVC_RUNNER_HOST;
      else process.env.SVC_RUNNER_HOST = before;
    }
    await app.start();
    const node = { app, builder, host, crashed: false };
    started.push(node);
    return node;
  }

  async function aliceOn(node: Node): Promise<{ caller: Caller; token: string; tokenId: string }> {
    const { token, summary } = await node.app.tokens.create('alice');
    return { caller: await node.app.tokens.authenticate(token), token, tokenId: summary.id };
  }

  const rowOf = async (node: Node, id: string): Promise<WorkflowRow> =>
    (await node.app.store.repos.workflows.findById(id))!;
  const reach = (node: Node, id: string, status: WorkflowRow['status']) =>
    waitFor(
      async () => {
        const row = await rowOf(node, id);
        return row.status === status ? row : null;
      },
      15_000,
      `${id} to be ${status}`,
    );
  const runOf = (node: Node, id: string): Promise<ManualRun> =>
    waitFor(
      () => {
        const run = node.builder.runOf(id);
        return run && run.idle && !run.ended ? run : null;
      },
      15_000,
      `the build of ${id} on ${node.host}`,
    );

  /** An `api` node (claims nothing; a send waits for a worker's claim as long as it takes) and a worker, on one store. */
  async function apiAndWorker(api: Partial<AppConfig> = {}, worker: Partial<AppConfig> = {}) {
    const dataDir = newDataDir();
    const a = await startNode(dataDir, 'api-node', { claims: false, claimWaitMs: 60_000, ...api });
    const w = await startNode(dataDir, 'worker-node', worker);
    const alice = await aliceOn(a);
    const projectId = (await a.app.projects.create(alice.caller, { name: 'Across' })).id;
    return { dataDir, a, w, alice, projectId };
  }

  it('a send through a node that claims nothing runs on the worker, and answers running once the worker claimed it', async () => {
    const { a, w, alice, projectId } = await apiAndWorker();
    const sent = await a.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    expect(sent.status).toBe('running');
    const run = await runOf(w, sent.workflowId);
    expect((await rowOf(a, sent.workflowId)).runnerId).toMatch(/^worker-node:/);
    expect(a.builder.runs).toEqual([]);
    run.finish();
    await reach(a, sent.workflowId, 'completed');
    const messages = (await a.app.workflows.messages(alice.caller, { projectId })).messages;
    expect(messages.map((m) => m.type)).toEqual(['instruction', 'status', 'status']);
    expect(messages[1]!.content).toMatch(/^Build started \(builder: manual\)/);
  });

  it('with no worker, a send through a node that claims nothing answers queued after its claim wait; a worker started later runs it', async () => {
    const dataDir = newDataDir();
    const a = await startNode(dataDir, 'api-node', { claims: false, claimWaitMs: 50 });
    const alice = await aliceOn(a);
    const projectId = (await a.app.projects.create(alice.caller, { name: 'Alone' })).id;
    const sent = await a.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    expect(sent).toMatchObject({ status: 'queued', queuePosition: 1 });
    const last = (await a.app.workflows.messages(alice.caller, { projectId })).messages.at(-1)!;
    expect(last.content).toBe(
      'Build queued: waiting for a worker with the manual builder; it starts when one is running.',
    );
    expect((await a.app.workflows.session(alice.caller, projectId)).waitingFor).toBe(
      'waiting for a worker with the manual builder',
    );
    expect(a.builder.runs).toEqual([]);
    const w = await startNode(dataDir, 'worker-node');
    (await runOf(w, sent.workflowId)).finish();
    await reach(a, sent.workflowId, 'completed');
  });

  it('cancel through a node that claims nothing stops the build on the worker and returns cancelled', async () => {
    const { a, w, alice, projectId } = await apiAndWorker();
    const sent = await a.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    const run = await runOf(w, sent.workflowId);
    const cancelled = await a.app.workflows.cancel(alice.caller, { projectId, workflowId: sent.workflowId });
    expect(cancelled).toEqual({ workflowId: sent.workflowId, status: 'cancelled', cancelled: true });
    expect(run.ended).toBe(true);
    expect(run.job.signal.reason).toBe('cancel');
    // The worker recorded it (the holder ends its own run), not the node that asked.
    const messages = (await a.app.workflows.messages(alice.caller, { projectId })).messages;
    expect(messages.filter((m) => m.content === 'Build cancelled.')).toHaveLength(1);
  });

  it('an answer through a node that claims nothing resumes the build waiting on the worker', async () => {
    const { a, w, alice, projectId } = await apiAndWorker();
    const sent = await a.app.workflows.send(alice.caller, { projectId, message: 'deploy it', kind: 'deploy' });
    const run = await runOf(w, sent.workflowId);
    run.ask('colour', 'Which colour?', { options: ['blue', 'green'] });
    await reach(a, sent.workflowId, 'waiting_for_input');
    const answered = await a.app.workflows.send(alice.caller, { projectId, message: 'blue' });
    expect(answered).toMatchObject({ workflowId: sent.workflowId, status: 'running' });
    await waitFor(() => run.answers.length > 0 && run.idle, 15_000, 'the answer to reach the builder');
    expect(run.answers).toEqual(['blue']);
    run.finish();
    await reach(a, sent.workflowId, 'completed');
    expect(a.builder.runs).toEqual([]);
  });

  it("the reaper of a node that claims nothing fails a dead worker's build as interrupted, and another worker runs the next one", async () => {
    // The api node ticks (its reaper is the one under test); the workers do not.
    const { dataDir, a, w, alice, projectId } = await apiAndWorker({ pollIntervalMs: 100 }, { leaseMs: 400 });
    const first = await a.app.workflows.send(alice.caller, { projectId, message: 'build one', kind: 'build' });
    await runOf(w, first.workflowId);
    const spare = await startNode(dataDir, 'spare-node');
    const second = await a.app.workflows.send(alice.caller, { projectId, message: 'build two', kind: 'build' });
    expect(second).toMatchObject({ status: 'queued', queuePosition: 1 });
    // The worker dies: its connection closes, its heartbeats stop.
    w.crashed = true;
    await w.app.store.close();
    const failed = await reach(a, first.workflowId, 'failed');
    expect(failed).toMatchObject({ errorCode: 'interrupted', runnerId: null });
    (await runOf(spare, second.workflowId)).finish();
    await reach(a, second.workflowId, 'completed');
    const messages = (await a.app.workflows.messages(alice.caller, { projectId, limit: 500 })).messages;
    expect(
      messages.filter((m) => m.workflowId === first.workflowId && m.type === 'error').map((m) => m.content),
    ).toEqual([
      'Build interrupted: The server running this workflow stopped or lost contact. Send the instruction again to retry.',
    ]);
    expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i + 1));
  });

  it("leases are written and compared on the database's clock (Store.clockOffsetMs), not the node's", async () => {
    const dataDir = newDataDir();
    const w = await startNode(dataDir, 'worker-node', { leaseMs: 60_000 });
    // The database's clock is an hour ahead of this worker's.
    w.app.store.clockOffsetMs = () => 3_600_000;
    const alice = await aliceOn(w);
    const projectId = (await w.app.projects.create(alice.caller, { name: 'Clocks' })).id;
    const before = Date.now();
    const sent = await w.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    await runOf(w, sent.workflowId);
    expect((await rowOf(w, sent.workflowId)).leaseExpiresAt).toBeGreaterThanOrEqual(before + 3_600_000 + 60_000);
    // A node that reads the database's clock as two hours ahead finds that lease over, and reaps it.
    const a = await startNode(dataDir, 'api-node', { claims: false, pollIntervalMs: 100 });
    a.app.store.clockOffsetMs = () => 7_200_000;
    expect(await reach(a, sent.workflowId, 'failed')).toMatchObject({ errorCode: 'interrupted' });
  });

  it('a workflow that waits for a slot on one claiming node is claimed by another as soon as it is queued', async () => {
    const dataDir = newDataDir();
    const busy = await startNode(dataDir, 'busy-node', { maxConcurrentWorkflows: 1 });
    const alice = await aliceOn(busy);
    const first = (await busy.app.projects.create(alice.caller, { name: 'One' })).id;
    const other = (await busy.app.projects.create(alice.caller, { name: 'Two' })).id;
    const idle = await startNode(dataDir, 'idle-node');
    const running = await busy.app.workflows.send(alice.caller, {
      projectId: first,
      message: 'build one',
      kind: 'build',
    });
    expect(running.status).toBe('running');
    await runOf(busy, running.workflowId);
    const waiting = await busy.app.workflows.send(alice.caller, {
      projectId: other,
      message: 'build two',
      kind: 'build',
    });
    expect(waiting.status).toBe('queued');
    (await runOf(idle, waiting.workflowId)).finish();
    await reach(busy, waiting.workflowId, 'completed');
  });

  it('an answer through one claiming node to a build another node holds answers running once that node resumed it', async () => {
    const dataDir = newDataDir();
    const holder = await startNode(dataDir, 'holder-node');
    const other = await startNode(dataDir, 'other-node');
    const alice = await aliceOn(holder);
    const projectId = (await holder.app.projects.create(alice.caller, { name: 'Held' })).id;
    const sent = await holder.app.workflows.send(alice.caller, { projectId, message: 'deploy it', kind: 'deploy' });
    const run = await runOf(holder, sent.workflowId);
    run.ask('colour', 'Which colour?');
    await reach(other, sent.workflowId, 'waiting_for_input');
    const answered = await other.app.workflows.send(alice.caller, { projectId, message: 'green' });
    expect(answered).toEqual({
      messageId: expect.any(String),
      workflowId: sent.workflowId,
      kind: 'deploy',
      status: 'running',
    });
    await waitFor(() => run.answers.length > 0, 15_000, 'the answer to reach the builder');
    expect(run.answers).toEqual(['green']);
    const messages = (await other.app.workflows.messages(alice.caller, { projectId })).messages;
    expect(messages.map((m) => m.content)).not.toContainEqual(expect.stringMatching(/^Answer received/));
  });

  it('svc_get_session waiting on one node returns when another node changes the project', async () => {
    const { a, w, alice, projectId } = await apiAndWorker();
    const sent = await a.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    const run = await runOf(w, sent.workflowId);
    const waited = a.app.workflows.waitSession(alice.caller, projectId, { waitMs: 60_000 });
    run.step('Generating the app screens');
    const view = await waited;
    expect(view.wait).toEqual({ changed: true, reason: 'changed' });
    expect(view.activeWorkflow?.step).toEqual({ index: 1, total: 9, name: 'Generating the app screens' });
  });

  it("an engine that claims nothing needs no builder, and its reaper fails a dead worker's build; one that claims refuses to be built without one", async () => {
    const dataDir = newDataDir();
    const w = await startNode(dataDir, 'worker-node', { leaseMs: 400 });
    const alice = await aliceOn(w);
    const projectId = (await w.app.projects.create(alice.caller, { name: 'Bare' })).id;
    const sent = await w.app.workflows.send(alice.caller, { projectId, message: 'build it', kind: 'build' });
    await runOf(w, sent.workflowId);
    // A store connection of its own, as another process has.
    const store = await openStore({ file: join(dataDir, 'mobile-builder.db') });
    const parts = (builder?: ManualBuilder) => ({
      store,
      journal: new WorkflowJournal(store, w.app.clock),
      artifactStore: w.app.artifactStore,
      publisher: new ArtifactPublisher({
        store,
        artifactStore: w.app.artifactStore,
        plans: GENEROUS_PLANS,
        clock: w.app.clock,
        logger: silentLogger(),
      }),
      builder,
      plans: GENEROUS_PLANS,
      dataDir,
      logger: silentLogger(),
      clock: w.app.clock,
    });
    expect(() => new WorkflowEngine(parts(), { maxConcurrent: 1 })).toThrow(/needs a builder/);
    const bare = new WorkflowEngine(parts(), {
      maxConcurrent: 1,
      claims: false,
      pollIntervalMs: 50,
      runner: newRunnerIdentity('bare-node'),
    });
    await bare.start();
    try {
      // The worker dies: its connection closes, its heartbeats stop.
      w.crashed = true;
      await w.app.store.close();
      await waitFor(
        async () => (await store.repos.workflows.findById(sent.workflowId))?.status === 'failed',
        15_000,
        'the bare engine to reap the build',
      );
      expect(await store.repos.workflows.findById(sent.workflowId)).toMatchObject({
        errorCode: 'interrupted',
        runnerId: null,
      });
    } finally {
      await bare.shutdown();
      await store.close();
    }
  });

  it('a token revoked through one node is refused by the other, told by a cache notice', async () => {
    const dataDir = newDataDir();
    const a = await startNode(dataDir, 'node-a');
    const b = await startNode(dataDir, 'node-b');
    const alice = await aliceOn(a);
    // Both nodes have verified (and cached) it.
    await b.app.tokens.authenticate(alice.token);
    const notices: string[] = [];
    const stop = a.app.store.events.subscribe('cache', (id) => notices.push(id));
    try {
      expect(await a.app.tokens.revoke(alice.tokenId)).toBe(true);
      expect(notices).toEqual(['tokens']);
      await a.app.tokens.setPlan('alice', 'free');
      expect(notices).toEqual(['tokens', 'tokens']);
    } finally {
      stop();
    }
    await expect(a.app.tokens.authenticate(alice.token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await waitFor(
      () =>
        Promise.resolve(b.app.tokens.authenticate(alice.token)).then(
          () => false,
          () => true,
        ),
      15_000,
      'the other node to refuse the token',
    );
  });
});
