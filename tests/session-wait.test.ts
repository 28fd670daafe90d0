/**
 * `svc_get_session` waits and reports (docs/hosts.md "A host's loop: create, build, wait, look, answer, deploy"): `waitSeconds` returns on a change
 * of the active workflow (driven by hand with the manual builder, so nothing depends on timing) or
 * when its bound is up; progress notifications name the step, over stdio and over streamable HTTP
 * (an SSE reply for a client that accepts one, one JSON body for a client that does not); the
 * wait outlives the per-message deadline and ends when the client goes away.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  httpClient,
  mcpError,
  post,
  startTestServer,
  toolResult,
  waitFor,
  type TestServer,
} from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { stdioClient } from './stream-client.js';

let server: TestServer;
let builder: ManualBuilder;
let token: string;
let http: Client;
let stdio: Client;
let stdioDone: Promise<void>;

beforeAll(async () => {
  builder = new ManualBuilder();
  // A short per-message deadline: a wait longer than it must still answer.
  server = await startTestServer({ builderInstance: builder, requestDeadlineMs: 1000 });
  token = server.token('alice');
  http = await httpClient(server.mcpUrl, token);
  ({ client: stdio, done: stdioDone } = await stdioClient(server.app, token));
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await http.close();
  await stdio.close();
  await stdioDone;
  await server.close();
});

/** A project with a running build whose run the test drives. */
async function runningBuild() {
  const project = await createProject(server.mcpUrl, token);
  const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'Build it',
    kind: 'build',
  });
  const run = await waitFor(() => builder.runOf(sent.workflowId), 15_000, 'the run to start');
  return { projectId: project.id as string, workflowId: sent.workflowId as string, run };
}

for (const transport of ['stdio', 'http'] as const) {
  describe(`over ${transport}`, () => {
    const client = () => (transport === 'stdio' ? stdio : http);

    it('returns as soon as the step changes, with progress messages naming the steps', async () => {
      const { projectId, run } = await runningBuild();
      run.step('Compiling the screens');
      await waitFor(
        async () =>
          (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId })).activeWorkflow?.step.name ===
          'Compiling the screens',
      );
      const messages: string[] = [];
      const call = client().callTool(
        { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 } },
        CallToolResultSchema,
        {
          onprogress: (p) => {
            messages.push(p.message ?? '');
            // The first notice says the wait has started: now change the step.
            if (messages.length === 1) run.step('Bundling the web preview');
          },
        },
      );
      const result = await call;
      const session = result.structuredContent as any;
      expect(session.wait).toEqual({ changed: true, reason: 'changed' });
      expect(session.activeWorkflow.step).toMatchObject({ index: 2, name: 'Bundling the web preview' });
      // The first notice names the step by name; the one sent with the change may reach the SDK's
      // client together with the answer (which then drops it): the answer carries that change.
      expect(messages[0]).toBe('build running: step 1/9 Compiling the screens');
      run.finish();
    });

    it('returns when a question is asked, and when the workflow ends', async () => {
      const { projectId, run } = await runningBuild();
      let started = false;
      const asked = client().callTool(
        { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 } },
        CallToolResultSchema,
        {
          onprogress: () => {
            if (!started) run.ask('color', 'Which color?', { options: ['red', 'blue'] });
            started = true;
          },
        },
      );
      const session = (await asked).structuredContent as any;
      expect(session.wait.reason).toBe('changed');
      expect(session.pendingQuestion).toMatchObject({ prompt: 'Which color?' });
      await client().callTool({
        name: 'svc_send_message',
        arguments: { projectId, message: 'red', questionId: session.pendingQuestion.questionId },
      });
      await waitFor(() => run.answers.length === 1 && run.idle);
      let begun = false;
      const ended = client().callTool(
        { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 } },
        CallToolResultSchema,
        {
          onprogress: () => {
            if (!begun) run.finish();
            begun = true;
          },
        },
      );
      const after = (await ended).structuredContent as any;
      expect(after.wait.reason).toBe('changed');
      expect(after.hasActiveWorkflows).toBe(false);
      expect(after.lastWorkflow.status).toBe('completed');
    });

    it('returns at once when the question it would wait for is already asked (nothing changes until it is answered)', async () => {
      const { projectId, run } = await runningBuild();
      run.ask('color', 'Which color?', { options: ['red', 'blue'] });
      await waitFor(
        async () => (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId })).pendingQuestion,
      );
      const result = await client().callTool({ name: 'svc_get_session', arguments: { projectId, waitSeconds: 30 } });
      const session = result.structuredContent as any;
      expect(session.wait).toEqual({ changed: false, reason: 'question_pending' });
      expect(session.pendingQuestion).toMatchObject({ prompt: 'Which color?' });
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId,
        message: 'red',
        questionId: session.pendingQuestion.questionId,
      });
      run.finish();
    });

    it('honours its bound (longer than the per-message deadline) when nothing changes', async () => {
      const { projectId, run } = await runningBuild();
      run.step('Thinking');
      await waitFor(
        async () =>
          (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId })).activeWorkflow?.step.name ===
          'Thinking',
      );
      const result = await client().callTool({ name: 'svc_get_session', arguments: { projectId, waitSeconds: 2 } });
      const session = result.structuredContent as any;
      expect(session.wait).toEqual({ changed: false, reason: 'time_up' });
      expect(session.activeWorkflow.step.name).toBe('Thinking');
      run.finish();
    });

    it('returns at once with nothing active, and refuses a waitSeconds out of range with -32602', async () => {
      const project = await createProject(server.mcpUrl, token);
      const result = await client().callTool({
        name: 'svc_get_session',
        arguments: { projectId: project.id, waitSeconds: 45 },
      });
      expect((result.structuredContent as any).wait).toEqual({ changed: false, reason: 'nothing_active' });
      // 60 is accepted, and said to be cut to the 45 s a wait may run.
      const capped = await client().callTool({
        name: 'svc_get_session',
        arguments: { projectId: project.id, waitSeconds: 60 },
      });
      expect((capped.structuredContent as any).wait).toEqual({
        changed: false,
        reason: 'nothing_active',
        cappedAtSeconds: 45,
      });
      for (const waitSeconds of [61, -1, 1.5, '5']) {
        const error = await mcpError(
          client().callTool({ name: 'svc_get_session', arguments: { projectId: project.id, waitSeconds } }),
        );
        expect(error.code).toBe(-32602);
        expect(error.message).toContain('Invalid parameter: waitSeconds');
      }
      const bad = await mcpError(
        client().callTool({ name: 'svc_get_session', arguments: { projectId: project.id, screenshot: 'yes' } }),
      );
      expect(bad.code).toBe(-32602);
    });
  });
}

describe('streamable HTTP replies', () => {
  const waitCall = (projectId: string, waitSeconds: number) => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'svc_get_session', arguments: { projectId, waitSeconds }, _meta: { progressToken: 'p1' } },
  });

  it('a client that accepts only application/json gets one JSON answer, no notification', async () => {
    const { projectId, run } = await runningBuild();
    const res = await post(server.mcpUrl, waitCall(projectId, 1), token, { Accept: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toMatchObject({ id: 7, result: { structuredContent: { wait: { reason: 'time_up' } } } });
    run.finish();
  });

  it('a client that accepts text/event-stream gets the progress notifications, then the answer, as SSE', async () => {
    const { projectId, run } = await runningBuild();
    const res = await post(server.mcpUrl, waitCall(projectId, 1), token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // Like every authenticated HTTP response, it carries the rate window that counted it.
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const events = res.text
      .split('\n\n')
      .filter((e) => e.startsWith('event: message'))
      .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
    expect(events[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'p1', progress: 1, message: expect.stringContaining('build running') },
    });
    expect(events.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { wait: { reason: 'time_up' } } } });
    run.finish();
  });

  it('a wait ends when its client goes away (nothing keeps listening for it)', async () => {
    const { projectId, run } = await runningBuild();
    const abort = new AbortController();
    const res = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(waitCall(projectId, 60)),
      signal: abort.signal,
    });
    // The first event is the wait's start: the server is listening for this project's changes.
    const reader = res.body!.getReader();
    await reader.read();
    expect(server.app.changes.watched()).toContain(projectId);
    abort.abort();
    await waitFor(() => !server.app.changes.watched().includes(projectId), 15_000, 'the wait to stop listening');
    run.finish();
  });
});

describe('over stdio, a cancelled wait', () => {
  it('ends when the client sends notifications/cancelled for it (nothing keeps listening for it)', async () => {
    const { projectId, run } = await runningBuild();
    const abort = new AbortController();
    let started = false;
    const call = stdio.callTool(
      { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 } },
      CallToolResultSchema,
      {
        signal: abort.signal,
        onprogress: () => {
          started = true;
        },
      },
    );
    call.catch(() => undefined);
    await waitFor(() => started, 15_000, 'the wait to start');
    expect(server.app.changes.watched()).toContain(projectId);
    // The SDK's client sends notifications/cancelled with the request's id.
    abort.abort('the user pressed Escape');
    await waitFor(() => !server.app.changes.watched().includes(projectId), 15_000, 'the wait to stop listening');
    run.finish();
  });
});
