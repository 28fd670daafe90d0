/**
 * Roles and draining in-process (docs/workflows.md#draining, docs/operators.md "Roles"): `App.drain` claims
 * nothing more at once, releases workflows waiting for input, lets running builds finish, and
 * `close` interrupts what still runs; `healthProblem` says `starting`, `draining`, `stopped`; an
 * `api` app claims nothing (a worker app on the same data dir builds its sends).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { startEngine, type EngineUnderTest } from './engine-harness.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';

describe('drain', () => {
  let engine: EngineUnderTest | undefined;
  afterEach(async () => {
    await engine?.stop();
    engine = undefined;
  });

  it('claims nothing more, releases a waiting workflow at once, lets the running build finish', async () => {
    engine = await startEngine({ maxConcurrent: 3 });
    const [p1, p2, p3] = [
      await engine.createProject('one'),
      await engine.createProject('two'),
      await engine.createProject('three'),
    ];
    const w1 = await engine.send(p1);
    const w2 = await engine.send(p2);
    expect([w1.status, w2.status]).toEqual(['running', 'running']);
    const run1 = await engine.running(w1.workflowId);
    (await engine.running(w2.workflowId)).ask();
    await engine.reach(w2.workflowId, 'waiting_for_input');
    expect(await engine.app.healthProblem()).toBeNull();

    const drained = engine.app.drain(600_000);
    expect(await engine.app.healthProblem()).toBe('draining');
    // Released: still waiting for its answer, held by nobody.
    await waitFor(() => engine!.row(w2.workflowId).runnerId === null, 10_000, 'the waiting workflow to be released');
    expect(engine.row(w2.workflowId).status).toBe('waiting_for_input');
    // A free slot, but nothing new is claimed.
    const w3 = await engine.send(p3);
    expect(w3.status).toBe('queued');
    expect(engine.row(w1.workflowId)).toMatchObject({ status: 'running', runnerId: engine.app.engine.runnerId });

    run1.finish();
    await drained;
    expect(engine.row(w1.workflowId)).toMatchObject({ status: 'completed', runnerId: null });
    expect(engine.row(w3.workflowId)).toMatchObject({ status: 'queued', runnerId: null });
    await engine.app.close();
    expect(await engine.app.healthProblem()).toBe('stopped');
  });

  it('what still runs when the drain ends is interrupted by close', async () => {
    engine = await startEngine();
    const project = await engine.createProject();
    const sent = await engine.send(project);
    await engine.running(sent.workflowId);
    await engine.app.drain(0);
    expect(engine.row(sent.workflowId).status).toBe('running');
    await engine.app.close();
    const db = new Database(join(engine.dataDir, 'mobile-builder.db'), { readonly: true });
    try {
      expect(
        db.prepare('select status, error_code, runner_id from workflows where id = ?').get(sent.workflowId),
      ).toEqual({ status: 'failed', error_code: 'interrupted', runner_id: null });
    } finally {
      db.close();
    }
  });
});

describe('roles in one process', () => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  // Two engines of one process share its pid: each gets a runner host of its own, as two
  // machines would have, so that neither takes the other for a dead process of its host.
  const open = async (dataDir: string, role: 'all' | 'api' | 'worker') => {
    const before = process.env.SVC_RUNNER_HOST;
    process.env.SVC_RUNNER_HOST = `${role}-host`;
    try {
      const app = await createApp({
        dataDir,
        role,
        builder: 'scripted',
        scriptedStepMs: 1,
        pollIntervalMs: 50,
        logger: silentLogger(),
        plans: GENEROUS_PLANS,
      });
      apps.push(app);
      return app;
    } finally {
      if (before === undefined) delete process.env.SVC_RUNNER_HOST;
      else process.env.SVC_RUNNER_HOST = before;
    }
  };

  it('an api app claims nothing and builds nothing; a worker app on the same data dir builds its sends', async () => {
    const dataDir = tempDir('mbm-roles-unit-');
    const api = await open(dataDir, 'api');
    expect(api.role).toBe('api');
    expect(await api.healthProblem()).toBe('starting');
    await api.start();
    expect(await api.healthProblem()).toBeNull();
    const caller = await api.tokens.authenticate((await api.tokens.create('alice')).token);
    const project = await api.projects.create(caller, { name: 'App' });
    const sent = await api.workflows.send(caller, { projectId: project.id, message: 'build it', kind: 'build' });
    expect(sent.status).toBe('queued');
    // Its engine ticks (every 50 ms) and still leaves it queued.
    const seen = await api.workflows.session(caller, project.id);
    expect(seen.activeWorkflow).toBeNull();
    expect(seen.queuedWorkflows.map((w) => w.id)).toEqual([sent.workflowId]);

    const worker = await open(dataDir, 'worker');
    await worker.start();
    const done = await waitFor(
      async () => {
        const session = await api.workflows.session(caller, project.id);
        return session.lastWorkflow?.status === 'completed' ? session : null;
      },
      15_000,
      'the worker to build it',
    );
    expect(done.lastWorkflow!.id).toBe(sent.workflowId);
    expect(api.engine.busy).toBe(0);
    expect(worker.engine.runnerId).toMatch(/^worker-host:/);
  });
});
