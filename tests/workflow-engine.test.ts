/**
 * The workflow engine's rules as specifications (docs/workflows.md), with a builder the test
 * drives by hand: per-project FIFO, the server-wide limit, answer and resume, cancel in every
 * state, crash recovery, build process groups, and the message length bound.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isGroupAlive, isReusedGroup } from '../src/workflows/process-groups.js';
import { startEngine, type EngineUnderTest } from './engine-harness.js';
import { startTestServer, toolResult, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { sqliteOf } from './store-access.js';

const engines: EngineUnderTest[] = [];
async function engine(options: Parameters<typeof startEngine>[0] = {}) {
  const e = await startEngine(options);
  engines.push(e);
  return e;
}
afterEach(async () => {
  for (const e of engines.splice(0)) {
    // Only groups still ours: pids wrap around quickly on a busy machine.
    for (const run of e.builder.runs) {
      for (const pgid of run.groups)
        if (isGroupAlive(pgid) && !isReusedGroup(pgid, run.leaders.get(pgid) ?? null)) process.kill(-pgid, 'SIGKILL');
    }
    await e.stop();
  }
});

const messagesOf = async (e: EngineUnderTest, projectId: string) =>
  (await e.app.workflows.messages(e.caller, { projectId, limit: 1000 })).messages;

describe('claiming: per-project FIFO and the server-wide limit', () => {
  it('the first send of an idle project runs at once; later ones queue with positions and start in order', async () => {
    const e = await engine({ maxConcurrent: 4 });
    const p = await e.createProject();
    const [a, b, c] = [await e.send(p, 'a'), await e.send(p, 'b'), await e.send(p, 'c')];
    expect(a).toMatchObject({ status: 'running' });
    expect(a.queuePosition).toBeUndefined();
    expect([b.status, b.queuePosition, c.status, c.queuePosition]).toEqual(['queued', 1, 'queued', 2]);
    expect(e.row(a.workflowId)).toMatchObject({ status: 'running', runnerId: e.app.engine.runnerId });
    expect(e.row(a.workflowId).leaseExpiresAt).toBeGreaterThan(Date.now());

    (await e.running(a.workflowId)).finish();
    await e.reach(a.workflowId, 'completed');
    await e.running(b.workflowId);
    expect(e.row(c.workflowId).status).toBe('queued');
    (await e.running(b.workflowId)).fail('no');
    await e.reach(b.workflowId, 'failed');
    (await e.running(c.workflowId)).finish();
    await e.reach(c.workflowId, 'completed');
    const started = e
      .rows()
      .map((r) => [r.instruction, r.startedAt] as const)
      .sort((x, y) => x[1]!.localeCompare(y[1]!));
    expect(started.map((s) => s[0])).toEqual(['a', 'b', 'c']);
    expect(e.row(b.workflowId)).toMatchObject({ errorCode: 'test_failure', runnerId: null, leaseExpiresAt: null });
  });

  it('a full server queues the first workflow of an idle project and says why; it starts when a slot frees', async () => {
    const e = await engine({ maxConcurrent: 1 });
    const [p, q] = [await e.createProject('P'), await e.createProject('Q')];
    const first = await e.send(p);
    const second = await e.send(q);
    expect(first.status).toBe('running');
    expect(second).toMatchObject({ status: 'queued', queuePosition: 1 });
    expect((await messagesOf(e, q)).at(-1)!.content).toMatch(/server is running its maximum number of workflows/);
    (await e.running(first.workflowId)).finish();
    await e.running(second.workflowId);
    expect(e.row(second.workflowId).status).toBe('running');
  });
});

describe('questions: answer and resume', () => {
  it('a waiting workflow frees its slot; once answered it waits for a slot, then re-claims it and the builder gets the answer', async () => {
    const e = await engine({ maxConcurrent: 1 });
    const [p, q] = [await e.createProject('P'), await e.createProject('Q')];
    const w = await e.send(p);
    (await e.running(w.workflowId)).ask('colour', 'Which colour?');
    await e.reach(w.workflowId, 'waiting_for_input');
    // Waiting does not hold the server's only slot.
    const other = await e.send(q);
    expect(other.status).toBe('running');
    // The answer is stored, but the only slot is Q's: P waits for it, its question answered.
    const answered = await e.answer(p, 'blue');
    expect(answered).toMatchObject({ workflowId: w.workflowId, status: 'queued', queuePosition: 1 });
    expect(e.row(w.workflowId).status).toBe('waiting_for_input');
    expect((await e.app.workflows.session(e.caller, p)).pendingQuestion).toBeNull();
    expect(e.builder.runOf(w.workflowId)!.answers).toEqual([]);
    (await e.running(other.workflowId)).finish();
    const run = await e.running(w.workflowId);
    expect(run.answers).toEqual(['blue']);
    expect(e.row(w.workflowId)).toMatchObject({ status: 'running', runnerId: e.app.engine.runnerId });
    run.finish();
    await e.reach(w.workflowId, 'completed');
    expect((await messagesOf(e, p)).map((m) => m.type)).toEqual([
      'instruction',
      'status',
      'question',
      'answer',
      'status',
      'status',
    ]);
    expect((await messagesOf(e, p)).at(-2)!.content).toMatch(/Answer received.*continues when a slot frees/);
  });

  it('with a free slot the answer resumes the builder at once', async () => {
    const e = await engine({ maxConcurrent: 1 });
    const p = await e.createProject('P');
    const w = await e.send(p);
    (await e.running(w.workflowId)).ask('colour', 'Which colour?');
    await e.reach(w.workflowId, 'waiting_for_input');
    expect(await e.answer(p, 'red')).toMatchObject({ workflowId: w.workflowId, status: 'running' });
    const run = await e.running(w.workflowId);
    expect(run.answers).toEqual(['red']);
    run.finish();
    await e.reach(w.workflowId, 'completed');
    expect((await messagesOf(e, p)).map((m) => m.type)).toEqual([
      'instruction',
      'status',
      'question',
      'answer',
      'status',
    ]);
  });
});

describe('cancel in every state', () => {
  it('queued: cancelled at once, and the queue behind it moves up', async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    const b = await e.send(p);
    const c = await e.send(p);
    expect(await e.cancel(p, b.workflowId)).toEqual({ workflowId: b.workflowId, status: 'cancelled', cancelled: true });
    expect(e.row(b.workflowId).startedAt).toBeNull();
    (await e.running(a.workflowId)).finish();
    await e.running(c.workflowId);
  });

  it('running: the builder is aborted and the workflow is cancelled when the call returns', async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    const run = await e.running(a.workflowId);
    expect(await e.cancel(p)).toEqual({ workflowId: a.workflowId, status: 'cancelled', cancelled: true });
    expect(run.ended).toBe(true);
    expect(e.row(a.workflowId)).toMatchObject({ runnerId: null, leaseExpiresAt: null });
  });

  it('waiting_for_input: cancelled, and the pending question is gone from the session', async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    (await e.running(a.workflowId)).ask();
    await e.reach(a.workflowId, 'waiting_for_input');
    expect(await e.cancel(p)).toEqual({ workflowId: a.workflowId, status: 'cancelled', cancelled: true });
    expect((await e.app.workflows.session(e.caller, p)).pendingQuestion).toBeNull();
  });

  it('cancelling, left by a dead runner: the next engine records it cancelled at start', async () => {
    const first = await engine();
    const p = await first.createProject();
    const a = await first.send(p);
    await first.running(a.workflowId);
    sqliteOf(first.app.store).prepare("update workflows set status = 'cancelling' where id = ?").run(a.workflowId);
    await first.crash();
    const second = await engine({ dataDir: first.dataDir });
    expect(second.row(a.workflowId)).toMatchObject({ status: 'cancelled', runnerId: null });
  });

  it('terminal: nothing changes and cancelled is false', async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    (await e.running(a.workflowId)).finish();
    const done = await e.reach(a.workflowId, 'completed');
    expect(await e.cancel(p, a.workflowId)).toEqual({
      workflowId: a.workflowId,
      status: 'completed',
      cancelled: false,
    });
    expect(e.row(a.workflowId)).toEqual(done);
  });
});

describe('crash recovery (the reaper at start)', () => {
  it('running -> failed/interrupted, waiting keeps its question and resumes on answer, the queue moves on, no message lost', async () => {
    const first = await engine({ maxConcurrent: 4 });
    const [p, q] = [await first.createProject('P'), await first.createProject('Q')];
    const running = await first.send(p, 'runs');
    const queued = await first.send(p, 'queued');
    const waiting = await first.send(q, 'asks');
    (await first.running(waiting.workflowId)).ask('app_id', 'Which id?');
    await first.reach(waiting.workflowId, 'waiting_for_input');
    await first.running(running.workflowId);
    const before = [...(await messagesOf(first, p)), ...(await messagesOf(first, q))];
    await first.crash();

    const second = await engine({ dataDir: first.dataDir, maxConcurrent: 4 });
    expect(second.row(running.workflowId)).toMatchObject({
      status: 'failed',
      errorCode: 'interrupted',
      runnerId: null,
    });
    expect(second.row(waiting.workflowId)).toMatchObject({ status: 'waiting_for_input', runnerId: null });
    expect((await second.app.workflows.session(second.caller, q)).pendingQuestion).toMatchObject({
      prompt: 'Which id?',
    });
    await second.running(queued.workflowId);
    const after = [...(await messagesOf(second, p)), ...(await messagesOf(second, q))];
    for (const m of before) expect(after).toContainEqual(m);

    expect(await second.answer(q, 'com.example.q')).toMatchObject({
      workflowId: waiting.workflowId,
      status: 'running',
    });
    const resumed = await second.running(waiting.workflowId);
    expect(resumed).not.toBe(first.builder.runOf(waiting.workflowId));
    // The builder runs again from the start; its question is answered from the store.
    resumed.ask('app_id', 'Which id?');
    await waitFor(() => resumed.answers.length === 1, 10_000, 'the stored answer');
    expect(resumed.answers).toEqual(['com.example.q']);
    resumed.finish();
    await second.reach(waiting.workflowId, 'completed');
    expect((await messagesOf(second, q)).filter((m) => m.type === 'question')).toHaveLength(1);
  });
});

describe('build process groups never outlive their workflow', () => {
  it('a group still alive when the builder ends is killed (SIGTERM ignored, so SIGKILL) before the workflow is recorded', async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    const run = await e.running(a.workflowId);
    run.spawnGroup();
    await waitFor(() => run.groups.length === 1 && run.idle, 10_000, 'the group');
    const pgid = run.groups[0]!;
    expect(
      sqliteOf(e.app.store).prepare('select workflow_id, runner_id from process_groups where pgid = ?').get(pgid),
    ).toEqual({
      workflow_id: a.workflowId,
      runner_id: e.app.engine.runnerId,
    });
    run.finish();
    await e.reach(a.workflowId, 'completed');
    expect(isGroupAlive(pgid)).toBe(false);
    expect(sqliteOf(e.app.store).prepare('select count(*) as n from process_groups').get()).toEqual({ n: 0 });
  });

  it('after a crash the next engine kills the recorded group, and the next workflow of the project starts only once it is dead', async () => {
    const first = await engine();
    const p = await first.createProject();
    const a = await first.send(p, 'spawns');
    const b = await first.send(p, 'next');
    const run = await first.running(a.workflowId);
    run.spawnGroup();
    await waitFor(() => run.groups.length === 1 && run.idle, 10_000, 'the group');
    const pgid = run.groups[0]!;
    await first.crash();
    expect(isGroupAlive(pgid)).toBe(true);

    const second = await startEngineWatching(first.dataDir, pgid);
    await second.engine.running(b.workflowId);
    expect(second.aliveAtStart()).toBe(false);
    expect(second.engine.row(a.workflowId)).toMatchObject({ status: 'failed', errorCode: 'interrupted' });
  });
});

/** A second engine whose builder notes whether `pgid` was alive when its first run started. */
async function startEngineWatching(dataDir: string, pgid: number) {
  let alive: boolean | null = null;
  const builder = new ManualBuilder();
  builder.onStart = () => {
    alive ??= isGroupAlive(pgid);
  };
  const e = await engine({ dataDir, builder });
  return { engine: e, aliveAtStart: () => alive };
}

describe('message length', () => {
  it('the largest valid message of astral characters (20,000 emoji) is stored and read back intact', async () => {
    const server = await startTestServer({ scriptedStepMs: 1_000_000 });
    try {
      const token = server.token('alice');
      const project = await toolResult(server.mcpUrl, token, 'svc_create_project', { name: 'Emoji' });
      const text = '😀'.repeat(20_000);
      const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: text });
      const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id });
      const stored = messages.find((m: any) => m.id === sent.messageId);
      expect(stored.content).toBe(text);
      await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    } finally {
      await server.close();
    }
  });

  it("a builder's text longer than 20,000 code points is cut on a code point boundary with a note", async () => {
    const e = await engine();
    const p = await e.createProject();
    const a = await e.send(p);
    const run = await e.running(a.workflowId);
    await run.context.say('😀'.repeat(20_001));
    const said = (await messagesOf(e, p)).at(-1)!.content;
    expect(said).toBe(`${'😀'.repeat(20_000)}\n[truncated]`);
    expect(said.isWellFormed()).toBe(true);
  });
});
