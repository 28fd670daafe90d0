/**
 * Fair shares of the build slots (docs/workflows.md, "Fair shares"): the server-wide cap holds
 * for answered workflows too, the next workflow is chosen round-robin across users (FIFO within
 * a project), and plans bound each user's running and queued workflows. The engine runs the
 * manual builder on a real store; every step is the test's, and the tests wait on states.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../src/auth/caller.js';
import { DEFAULT_PLANS } from '../src/limits/plans.js';
import { startEngine, type EngineUnderTest } from './engine-harness.js';
import { callTool, GENEROUS_PLANS, startTestServer, toolResult, waitFor, type TestServer } from './helpers.js';

const engines: EngineUnderTest[] = [];
let server: TestServer | undefined;
async function engine(options: Parameters<typeof startEngine>[0] = {}) {
  const e = await startEngine(options);
  engines.push(e);
  return e;
}
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop();
  await server?.close();
  server = undefined;
});

/** Builder runs that execute now: started, not ended, not waiting inside a question. */
function executing(e: EngineUnderTest): string[] {
  return e.builder
    .live()
    .filter((r) => r.idle)
    .map((r) => r.job.workflowId);
}

describe('answered workflows wait for a slot', () => {
  it('four workflows answered in four projects with --max-concurrent-workflows 1 never run more than one at once', async () => {
    const e = await engine({ maxConcurrent: 1 });
    const projects: string[] = [];
    for (const n of ['A', 'B', 'C', 'D']) projects.push(await e.createProject(n));
    const ids: string[] = [];
    // Each asks in turn: a waiting workflow frees the only slot for the next project's.
    for (const p of projects) {
      const w = await e.send(p);
      expect(w.status).toBe('running');
      (await e.running(w.workflowId)).ask('colour', 'Which colour?');
      await e.reach(w.workflowId, 'waiting_for_input');
      ids.push(w.workflowId);
    }
    const runningRows = () =>
      e
        .rows()
        .filter((r) => r.status === 'running')
        .map((r) => r.id);
    const statuses: string[] = [];
    for (const p of projects) statuses.push((await e.answer(p, 'blue')).status);
    // The first answer takes the free slot; the other three wait, their questions answered.
    expect(statuses).toEqual(['running', 'queued', 'queued', 'queued']);
    expect(runningRows()).toEqual([ids[0]]);
    for (const p of projects.slice(1))
      expect(await e.app.workflows.session(e.caller, p)).toMatchObject({
        activeWorkflow: { status: 'waiting_for_input' },
        pendingQuestion: null,
      });

    const order: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const current = await waitFor(
        () => (executing(e).length === 1 ? executing(e)[0] : null),
        10_000,
        'one resumed build',
      );
      order.push(current!);
      expect(runningRows()).toEqual([current]);
      expect(executing(e)).toHaveLength(1);
      const run = e.builder.runOf(current!)!;
      expect(run.answers).toEqual(['blue']);
      run.finish();
      await e.reach(current!, 'completed');
    }
    // One user: oldest first.
    expect(order).toEqual(ids);
  });
});

describe('round-robin across users, FIFO within a project', () => {
  it("user A's backlog of six delays user B's builds by at most one of A's each", async () => {
    const e = await engine({ maxConcurrent: 1 });
    const bob: Caller = await e.app.tokens.authenticate((await e.app.tokens.create('bob')).token);
    const [a1, a2] = [await e.createProject('A1'), await e.createProject('A2')];
    const b1 = (await e.app.projects.create(bob, { name: 'B1' })).id;
    const name = new Map<string, string>();
    const sendA = async (p: string, n: string) => name.set((await e.send(p, n)).workflowId, n);
    const sendB = async (n: string) =>
      name.set((await e.app.workflows.send(bob, { projectId: b1, message: n, kind: 'build' })).workflowId, n);
    for (const n of ['a1', 'a2', 'a3']) await sendA(a1, n);
    for (const n of ['a4', 'a5', 'a6']) await sendA(a2, n);
    await sendB('b1');

    const started: string[] = [];
    const finishNext = async () => {
      const id = await waitFor(() => (executing(e).length === 1 ? executing(e)[0] : null), 10_000, 'the next build');
      started.push(name.get(id!)!);
      e.builder.runOf(id!)!.finish();
      await e.reach(id!, 'completed');
    };
    await finishNext(); // a1
    await finishNext(); // b1
    await sendB('b2');
    while (started.length < 8) await finishNext();
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4', 'a5', 'a6']);
  });
});

describe('plan bounds on running and queued workflows', () => {
  it("maxRunningWorkflows keeps a user's second build queued while slots are free; another user's runs at once", async () => {
    server = await startTestServer({
      scriptedStepMs: 1_000_000,
      maxConcurrentWorkflows: 4,
      plans: { free: { ...GENEROUS_PLANS.free, maxRunningWorkflows: 1 } },
    });
    const alice = server.token('alice');
    const bob = server.token('bob');
    const [p, q] = [
      await toolResult(server.mcpUrl, alice, 'svc_create_project', { name: 'P' }),
      await toolResult(server.mcpUrl, alice, 'svc_create_project', { name: 'Q' }),
    ];
    const r = await toolResult(server.mcpUrl, bob, 'svc_create_project', { name: 'R' });
    expect(
      await toolResult(server.mcpUrl, alice, 'svc_send_message', { projectId: p.id, message: 'one', kind: 'build' }),
    ).toMatchObject({ status: 'running' });
    expect(
      await toolResult(server.mcpUrl, alice, 'svc_send_message', { projectId: q.id, message: 'two', kind: 'build' }),
    ).toMatchObject({ status: 'queued', queuePosition: 1 });
    // The conversation says why it waits: her plan's bound, not a full server (three slots are free).
    const said = (await toolResult(server.mcpUrl, alice, 'svc_get_messages', { projectId: q.id })).messages.at(
      -1,
    ).content;
    expect(said).toMatch(/your plan allows 1 running workflow/);
    expect(said).not.toMatch(/server is running its maximum/);
    expect(
      await toolResult(server.mcpUrl, bob, 'svc_send_message', { projectId: r.id, message: 'three', kind: 'build' }),
    ).toMatchObject({ status: 'running' });
    // Cancelling alice's running build frees her share: Q starts.
    await toolResult(server.mcpUrl, alice, 'svc_cancel_workflow', { projectId: p.id });
    await waitFor(
      async () =>
        (await toolResult(server!.mcpUrl, alice, 'svc_get_session', { projectId: q.id })).activeWorkflow?.status ===
        'running',
      10_000,
      'Q to start',
    );
  });

  it('maxQueuedWorkflows refuses sends past it with -32005 scope "queued_workflows"; concurrent sends never pass it nor lose a message', async () => {
    server = await startTestServer({
      scriptedStepMs: 1_000_000,
      maxConcurrentWorkflows: 2,
      plans: { free: { ...GENEROUS_PLANS.free, maxQueuedWorkflows: 5 } },
    });
    const alice = server.token('alice');
    const bob = server.token('bob');
    const projects = await Promise.all(
      ['P', 'Q', 'R'].map((name) => toolResult(server!.mcpUrl, alice, 'svc_create_project', { name })),
    );
    // P and Q take the server's two slots; then 22 sends at once over the three projects: 5 queue, 17 are refused.
    const first = [];
    for (const p of projects.slice(0, 2))
      first.push(
        await toolResult(server.mcpUrl, alice, 'svc_send_message', {
          projectId: p.id,
          message: 'first',
          kind: 'build',
        }),
      );
    const replies = await Promise.all(
      Array.from({ length: 22 }, (_, i) =>
        callTool(server!.mcpUrl, alice, 'svc_send_message', {
          projectId: projects[i % 3].id,
          message: `job ${i}`,
          kind: 'build',
        }),
      ),
    );
    const accepted = [
      ...first,
      ...replies.filter((r) => r.status === 200 && r.json.result).map((r) => r.json.result.structuredContent),
    ];
    const refused = replies.filter((r) => r.status === 429);
    expect(accepted.filter((a) => a.status === 'running')).toHaveLength(2);
    expect(accepted.filter((a) => a.status === 'queued')).toHaveLength(5);
    expect(refused).toHaveLength(17);
    for (const r of refused)
      expect(r.json.error).toMatchObject({ code: -32005, data: { scope: 'queued_workflows', limit: 5, plan: 'free' } });

    // Every accepted send has its instruction in its project's conversation; no refused one has.
    const messages = (
      await Promise.all(
        projects.map((p) => toolResult(server!.mcpUrl, alice, 'svc_get_messages', { projectId: p.id, limit: 500 })),
      )
    ).flatMap((m) => m.messages);
    const instructions = messages.filter((m: any) => m.type === 'instruction');
    expect(instructions.map((m: any) => m.id).sort()).toEqual(accepted.map((a) => a.messageId).sort());
    // One active workflow per project.
    for (const p of projects) {
      const session = await toolResult(server.mcpUrl, alice, 'svc_get_session', { projectId: p.id });
      expect(session.queuedWorkflows.every((w: any) => w.status === 'queued')).toBe(true);
    }
    // The bound is the user's: another user still sends.
    const other = await toolResult(server.mcpUrl, bob, 'svc_create_project', { name: 'S' });
    expect(
      (await callTool(server.mcpUrl, bob, 'svc_send_message', { projectId: other.id, message: 'mine', kind: 'build' }))
        .status,
    ).toBe(200);
  });

  it('the built-in plans name both bounds', () => {
    expect(DEFAULT_PLANS.free).toMatchObject({ maxRunningWorkflows: 2, maxQueuedWorkflows: 20 });
    expect(DEFAULT_PLANS.pro).toMatchObject({ maxRunningWorkflows: 8, maxQueuedWorkflows: 200 });
  });
});
