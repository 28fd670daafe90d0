/**
 * Workflows through the real server (docs/contract.md#tools, docs/builders.md#builders): the state machine,
 * the queue under parallel sends, cancellation of every kind, question validation, previews
 * served and traversal refused, and the access matrix of the four workflow tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  createProject,
  rawHttp,
  startTestServer,
  toolResult,
  waitFor,
  waitIdle,
  waitQuestion,
  type TestServer,
} from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let alice: string;
let bob: string;
/** A server whose builds never finish by themselves: a workflow is running until the test cancels it. */
let stuck: TestServer;
let stuckAlice: string;

beforeAll(async () => {
  server = await startTestServer({ scriptedStepMs: 150, maxConcurrentWorkflows: 4 });
  alice = server.token('alice');
  bob = server.token('bob');
  stuck = await startTestServer({ scriptedStepMs: 1_000_000, maxConcurrentWorkflows: 4 });
  stuckAlice = stuck.token('alice');
});
afterAll(async () => {
  await server.close();
  await stuck.close();
});

const tool = (name: string, args: Record<string, unknown>, token = alice) =>
  toolResult(server.mcpUrl, token, name, args);
const stuckTool = (name: string, args: Record<string, unknown>) => toolResult(stuck.mcpUrl, stuckAlice, name, args);
const statusOf = (id: string) =>
  (sqliteOf(server.app.store).prepare('select status from workflows where id = ?').get(id) as { status: string })
    .status;

describe('state machine', () => {
  it('build: queued/running -> completed, steps recorded, updatedAt moves, messages in order', async () => {
    const project = await createProject(server.mcpUrl, alice, { name: 'Notes', description: 'Take <notes>' });
    const sent = await tool('svc_send_message', { projectId: project.id, message: 'Make a notes app with tags' });
    expect(sent).toMatchObject({ kind: 'build', status: 'running' });
    expect(sent.queuePosition).toBeUndefined();
    const idle = await waitIdle(server.mcpUrl, alice, project.id);
    expect(idle.activeWorkflow).toBeNull();
    expect(idle.lastWorkflow).toMatchObject({
      id: sent.workflowId,
      status: 'completed',
      step: { index: 4, total: 4 },
      error: null,
    });
    expect(idle.lastWorkflow.finishedAt >= idle.lastWorkflow.startedAt).toBe(true);
    const after = await tool('svc_get_project', { projectId: project.id });
    expect(after.updatedAt > project.updatedAt).toBe(true);
    expect(after.updatedAt).toBe(idle.lastWorkflow.finishedAt);
    const { messages } = await tool('svc_get_messages', { projectId: project.id });
    expect(messages.map((m: any) => m.seq)).toEqual(messages.map((_: unknown, i: number) => i + 1));
    expect(messages[0]).toMatchObject({
      role: 'user',
      type: 'instruction',
      content: 'Make a notes app with tags',
      workflowId: sent.workflowId,
    });
    expect(messages.at(-1)).toMatchObject({ role: 'system', type: 'status', content: 'Build completed.' });
    expect(messages.some((m: any) => m.role === 'agent' && /simulates a building agent/.test(m.content))).toBe(true);
  });

  it('infers the kind from the text unless given', async () => {
    const project = await createProject(stuck.mcpUrl, stuckAlice);
    const ship = await stuckTool('svc_send_message', { projectId: project.id, message: 'Please ship it to the store' });
    expect(ship.kind).toBe('deploy');
    await stuckTool('svc_cancel_workflow', { projectId: project.id });
    const forced = await stuckTool('svc_send_message', {
      projectId: project.id,
      message: 'publish later, just build now',
      kind: 'build',
    });
    expect(forced.kind).toBe('build');
    await stuckTool('svc_cancel_workflow', { projectId: project.id });
  });

  it('10 parallel sends on one project give exactly one running and queue positions 1..9, then run in FIFO order', async () => {
    const project = await createProject(stuck.mcpUrl, stuckAlice);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        stuckTool('svc_send_message', { projectId: project.id, message: `build step ${i}`, kind: 'build' }),
      ),
    );
    expect(results.filter((r) => r.status === 'running')).toHaveLength(1);
    const queued = results.filter((r) => r.status === 'queued');
    expect(queued.map((r) => r.queuePosition).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const session = await stuckTool('svc_get_session', { projectId: project.id });
    expect(session.queuedWorkflows).toHaveLength(9);
    const active = sqliteOf(stuck.app.store)
      .prepare(
        "select count(*) as n from workflows where project_id = ? and status in ('running','waiting_for_input','cancelling')",
      )
      .get(project.id) as { n: number };
    expect(active.n).toBe(1);
    // End the running one and the next in turn: each time the oldest queued one starts. Then
    // cancel the rest from the back, so that nothing else starts.
    const byPosition = [...queued].sort((a, b) => a.queuePosition - b.queuePosition);
    const running = results.find((r) => r.status === 'running')!;
    await stuckTool('svc_cancel_workflow', { projectId: project.id, workflowId: running.workflowId });
    const stuckStatus = (id: string) =>
      (sqliteOf(stuck.app.store).prepare('select status from workflows where id = ?').get(id) as { status: string })
        .status;
    await waitFor(
      () => stuckStatus(byPosition[0].workflowId) === 'running' || null,
      15_000,
      'the first queued to start',
    );
    await stuckTool('svc_cancel_workflow', { projectId: project.id, workflowId: byPosition[0].workflowId });
    await waitFor(
      () => stuckStatus(byPosition[1].workflowId) === 'running' || null,
      15_000,
      'the second queued to start',
    );
    for (const r of byPosition.slice(1).reverse())
      await stuckTool('svc_cancel_workflow', { projectId: project.id, workflowId: r.workflowId });
    const started = sqliteOf(stuck.app.store)
      .prepare('select id from workflows where project_id = ? and started_at is not null order by started_at, seq')
      .all(project.id)
      .map((r: any) => r.id);
    expect(started).toEqual([running.workflowId, byPosition[0].workflowId, byPosition[1].workflowId]);
  });

  it('the partial unique index refuses a second active workflow even past the engine', async () => {
    const project = await createProject(stuck.mcpUrl, stuckAlice);
    const sent = await stuckTool('svc_send_message', { projectId: project.id, message: 'build' });
    const insert = () =>
      sqliteOf(stuck.app.store)
        .prepare(
          "insert into workflows (id, project_id, seq, kind, status, instruction, created_at) values (?, ?, 999999, 'build', 'running', 'x', 'now')",
        )
        .run('11111111-1111-4111-8111-111111111111', project.id);
    expect(insert).toThrow(/UNIQUE/);
    await stuckTool('svc_cancel_workflow', { projectId: project.id, workflowId: sent.workflowId });
  });
});

describe('questions', () => {
  it('first deploy asks for the app identifier; a bad answer is -32602 and stays pending; a good one resumes; the next deploy does not ask', async () => {
    const project = await createProject(server.mcpUrl, alice, { name: 'Shop' });
    await tool('svc_send_message', { projectId: project.id, message: 'Build a shop' });
    await waitIdle(server.mcpUrl, alice, project.id);
    const deploy = await tool('svc_send_message', { projectId: project.id, message: 'Deploy it' });
    expect(deploy.kind).toBe('deploy');
    const waiting = await waitQuestion(server.mcpUrl, alice, project.id);
    expect(waiting.activeWorkflow.status).toBe('waiting_for_input');
    const question = waiting.pendingQuestion;
    expect(question).toMatchObject({ workflowId: deploy.workflowId, pattern: expect.any(String) });

    const before = await tool('svc_get_messages', { projectId: project.id });
    const bad = await callTool(server.mcpUrl, alice, 'svc_send_message', {
      projectId: project.id,
      message: 'my app',
      questionId: question.questionId,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe(-32602);
    expect(bad.json.error.message).toMatch(/^Invalid parameter: message must match the pattern/);
    expect(bad.json.error.data).toMatchObject({
      questionId: question.questionId,
      prompt: question.prompt,
      hint: expect.stringContaining('pass kind ("build" or "deploy") without questionId'),
    });
    const wrongId = await callTool(server.mcpUrl, alice, 'svc_send_message', {
      projectId: project.id,
      message: 'com.example.shop',
      questionId: '00000000-0000-4000-8000-000000000000',
    });
    expect(wrongId.json.error.message).toBe('Invalid parameter: questionId does not match the pending question');
    const still = await tool('svc_get_session', { projectId: project.id });
    expect(still.pendingQuestion.questionId).toBe(question.questionId);
    expect((await tool('svc_get_messages', { projectId: project.id })).messages).toHaveLength(before.messages.length);

    const answered = await tool('svc_send_message', {
      projectId: project.id,
      message: 'com.example.shop',
      questionId: question.questionId,
    });
    expect(answered).toMatchObject({ workflowId: deploy.workflowId, kind: 'deploy', status: 'running' });
    const done = await waitIdle(server.mcpUrl, alice, project.id);
    expect(done.lastWorkflow).toMatchObject({ id: deploy.workflowId, status: 'completed' });
    const deployment = done.previewUrls.find((u: any) => u.kind === 'deployment');
    expect(deployment.url).toMatch(/\/deployments\/[0-9a-f-]{36}\/$/);

    const second = await tool('svc_send_message', { projectId: project.id, message: 'deploy again' });
    const again = await waitIdle(server.mcpUrl, alice, project.id);
    expect(again.lastWorkflow).toMatchObject({ id: second.workflowId, status: 'completed' });
    const { messages } = await tool('svc_get_messages', { projectId: project.id, limit: 500 });
    expect(messages.filter((m: any) => m.type === 'question')).toHaveLength(1);
    expect(messages.find((m: any) => m.workflowId === second.workflowId && m.type === 'result').content).toMatch(
      /Deploy #2: web \(com\.example\.shop\) published/,
    );
  });

  it('questionId without a pending question is refused and creates nothing', async () => {
    const project = await createProject(server.mcpUrl, alice);
    const res = await callTool(server.mcpUrl, alice, 'svc_send_message', {
      projectId: project.id,
      message: 'x',
      questionId: '00000000-0000-4000-8000-000000000000',
    });
    expect(res.json.error.code).toBe(-32602);
    expect((await tool('svc_get_session', { projectId: project.id })).hasActiveWorkflows).toBe(false);
  });
});

describe('cancel', () => {
  it('queued: at once; running: stopped and cancelled; waiting: cancelled; finished: cancelled false; none: -32004', async () => {
    const stuckProject = await createProject(stuck.mcpUrl, stuckAlice);
    const first = await stuckTool('svc_send_message', { projectId: stuckProject.id, message: 'build one' });
    const second = await stuckTool('svc_send_message', { projectId: stuckProject.id, message: 'build two' });
    expect([first.status, second.status]).toEqual(['running', 'queued']);

    expect(
      await stuckTool('svc_cancel_workflow', { projectId: stuckProject.id, workflowId: second.workflowId }),
    ).toEqual({ workflowId: second.workflowId, status: 'cancelled', cancelled: true });
    expect(await stuckTool('svc_cancel_workflow', { projectId: stuckProject.id })).toEqual({
      workflowId: first.workflowId,
      status: 'cancelled',
      cancelled: true,
    });
    const session = await stuckTool('svc_get_session', { projectId: stuckProject.id });
    expect(session.hasActiveWorkflows).toBe(false);
    expect(session.lastWorkflow.status).toBe('cancelled');

    const none = await callTool(stuck.mcpUrl, stuckAlice, 'svc_cancel_workflow', { projectId: stuckProject.id });
    expect(none.status).toBe(404);
    expect(none.json.error).toEqual({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'workflow', reason: 'none active' },
    });
    expect(
      await stuckTool('svc_cancel_workflow', { projectId: stuckProject.id, workflowId: first.workflowId }),
    ).toEqual({ workflowId: first.workflowId, status: 'cancelled', cancelled: false });

    const project = await createProject(server.mcpUrl, alice);

    await tool('svc_send_message', { projectId: project.id, message: 'deploy', kind: 'deploy' });
    const waiting = await waitQuestion(server.mcpUrl, alice, project.id);
    const cancelWaiting = await tool('svc_cancel_workflow', { projectId: project.id });
    expect(cancelWaiting).toEqual({ workflowId: waiting.activeWorkflow.id, status: 'cancelled', cancelled: true });
    expect((await tool('svc_get_session', { projectId: project.id })).pendingQuestion).toBeNull();

    const done = await tool('svc_send_message', { projectId: project.id, message: 'build' });
    await waitIdle(server.mcpUrl, alice, project.id);
    expect(await tool('svc_cancel_workflow', { projectId: project.id, workflowId: done.workflowId })).toEqual({
      workflowId: done.workflowId,
      status: 'completed',
      cancelled: false,
    });

    const other = await createProject(server.mcpUrl, alice);
    const foreign = await callTool(server.mcpUrl, alice, 'svc_cancel_workflow', {
      projectId: other.id,
      workflowId: done.workflowId,
    });
    expect(foreign.json.error.code).toBe(-32004);
  });

  it('the queued workflow behind a cancelled one starts by itself', async () => {
    const project = await createProject(server.mcpUrl, alice);
    const first = await tool('svc_send_message', { projectId: project.id, message: 'build one' });
    const second = await tool('svc_send_message', { projectId: project.id, message: 'build two' });
    await tool('svc_cancel_workflow', { projectId: project.id, workflowId: first.workflowId });
    await waitFor(() => statusOf(second.workflowId) !== 'queued' || null, 10_000, 'the next workflow to start');
    const done = await waitIdle(server.mcpUrl, alice, project.id);
    expect(done.lastWorkflow).toMatchObject({ id: second.workflowId, status: 'completed' });
  });
});

describe('previews', () => {
  it("serves the preview page with the project's escaped text and refuses traversal", async () => {
    const project = await createProject(server.mcpUrl, alice, {
      name: 'Cafe <script>alert(1)</script>',
      description: 'Coffee & cake',
    });
    await tool('svc_send_message', { projectId: project.id, message: 'Show a menu with "prices"' });
    const session = await waitIdle(server.mcpUrl, alice, project.id);
    const url = session.previewUrls[0].url as string;
    const page = await rawHttp(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = page.text;
    expect(html).toContain('Cafe &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Coffee &amp; cake');
    expect(html).toContain('Show a menu with &quot;prices&quot;');

    const base = url.replace(/\/$/, '');
    expect((await rawHttp(base)).status).toBe(308);
    for (const path of [
      '/../mobile-builder.db',
      '/..%2f..%2fmobile-builder.db',
      '/%2e%2e/%2e%2e/mobile-builder.db',
      '/nothing.html',
      '/%00',
    ]) {
      const res = await rawHttp(base + path);
      expect(res.status, path).toBe(404);
    }
    const id = base.split('/').pop();
    expect((await rawHttp(`${server.http.url}/deployments/${id}/`)).status).toBe(404);
    expect((await rawHttp(`${server.http.url}/previews/not-a-uuid/`)).status).toBe(404);
  });
});

describe('access matrix of the workflow tools', () => {
  it('owner: all; other user: reads of public only, no writes; no token: nothing', async () => {
    const priv = await createProject(server.mcpUrl, alice, { visibility: 'private' });
    const pub = await createProject(server.mcpUrl, alice, { visibility: 'public' });
    const cases = [
      { name: 'svc_get_session', args: (id: string) => ({ projectId: id }), write: false },
      { name: 'svc_get_messages', args: (id: string) => ({ projectId: id }), write: false },
      { name: 'svc_send_message', args: (id: string) => ({ projectId: id, message: 'build' }), write: true },
      { name: 'svc_cancel_workflow', args: (id: string) => ({ projectId: id }), write: true },
    ];
    for (const c of cases) {
      for (const [project, visibility] of [
        [priv, 'private'],
        [pub, 'public'],
      ] as const) {
        const label = `${c.name} ${visibility}`;
        const owner = await callTool(server.mcpUrl, alice, c.name, c.args(project.id));
        // The owner's cancel with nothing active is -32004; everything else succeeds.
        if (c.name === 'svc_cancel_workflow') expect([200, 404], label).toContain(owner.status);
        else expect(owner.status, label).toBe(200);
        const other = await callTool(server.mcpUrl, bob, c.name, c.args(project.id));
        const expected = !c.write && visibility === 'public' ? 200 : 403;
        expect(other.status, `other ${label}`).toBe(expected);
        if (expected === 403)
          expect(other.json.error.message).toBe('Access denied - you do not have permission for this resource');
        const anonymous = await callTool(server.mcpUrl, undefined, c.name, c.args(project.id));
        expect(anonymous.status, `anonymous ${label}`).toBe(401);
      }
      await tool('svc_cancel_workflow', { projectId: priv.id }).catch(() => undefined);
      await tool('svc_cancel_workflow', { projectId: pub.id }).catch(() => undefined);
    }
  });
});

describe('server-wide concurrency limit', () => {
  it("with --max-concurrent-workflows 1, a second project's workflow waits as queued (position 1) and starts when the first ends", async () => {
    const limited = await startTestServer({ scriptedStepMs: 1_000_000, maxConcurrentWorkflows: 1 });
    try {
      const token = limited.token('alice');
      const a = await createProject(limited.mcpUrl, token, { name: 'A' });
      const b = await createProject(limited.mcpUrl, token, { name: 'B' });
      const first = await toolResult(limited.mcpUrl, token, 'svc_send_message', {
        projectId: a.id,
        message: 'build A',
      });
      const second = await toolResult(limited.mcpUrl, token, 'svc_send_message', {
        projectId: b.id,
        message: 'build B',
      });
      expect(first.status).toBe('running');
      expect(second).toMatchObject({ status: 'queued', queuePosition: 1 });
      const { messages } = await toolResult(limited.mcpUrl, token, 'svc_get_messages', { projectId: b.id });
      expect(messages.at(-1).content).toMatch(/maximum number of workflows/);
      // A's end frees the slot (here by a cancel: these builds never finish by themselves).
      await toolResult(limited.mcpUrl, token, 'svc_cancel_workflow', { projectId: a.id });
      const startedB = await waitFor(
        async () => {
          const s = await toolResult(limited.mcpUrl, token, 'svc_get_session', { projectId: b.id });
          return s.activeWorkflow?.status === 'running' ? s : null;
        },
        15_000,
        'B to start',
      );
      const doneA = await toolResult(limited.mcpUrl, token, 'svc_get_session', { projectId: a.id });
      expect(startedB.activeWorkflow.id).toBe(second.workflowId);
      expect(startedB.activeWorkflow.startedAt >= doneA.lastWorkflow.finishedAt).toBe(true);
      await toolResult(limited.mcpUrl, token, 'svc_cancel_workflow', { projectId: b.id });
    } finally {
      await limited.close();
    }
  });
});
