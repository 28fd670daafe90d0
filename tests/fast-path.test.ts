/**
 * The request's fast path (docs/performance.md "Performance"): a `tools/call` whose answer and admission are at
 * hand is answered without a wait, with the reply the full path gives, counted once in the rate
 * window and reported once to the metrics; anything else takes the full path, having counted
 * nothing. Real app, real SQLite, raw HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/mcp/define-tool.js';
import { replyJson } from '../src/mcp/reply-json.js';
import { ToolDispatcher } from '../src/mcp/tool-dispatcher.js';
import { callTool, createProject, post, rawHttp, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
let alice: string;
let bob: string;
let privateId: string;
let publicId: string;

beforeAll(async () => {
  server = await startTestServer({ metrics: {} });
  alice = server.token('alice');
  bob = server.token('bob');
  privateId = (await createProject(server.mcpUrl, alice, { name: 'Private' })).id;
  publicId = (await createProject(server.mcpUrl, alice, { name: 'Public', visibility: 'public' })).id;
});
afterAll(() => server.close());

const getProject = (projectId: string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 41,
  method: 'tools/call',
  params: { name: 'svc_get_project', arguments: { projectId }, ...extra },
});

/** The caller of a token, as the HTTP transport authenticates it. */
async function callerOf(token: string) {
  return (await server.app.gate.readingKey(token, '127.0.0.1')).caller!;
}

/** The count of `svc_get_project` calls answered `code` in the metrics. */
async function toolCalls(code: string): Promise<number> {
  const text = (await rawHttp(server.mcpUrl.replace('/mcp', '/metrics'))).text;
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('mbm_tool_calls_total{') && l.includes('tool="svc_get_project"') && l.includes(`code="${code}"`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('the fast path of a tool call', () => {
  it('answers svc_get_project without a wait, byte for byte as the full path does', async () => {
    const caller = await callerOf(alice);
    const text = JSON.stringify(getProject(privateId));
    const admit = (method: string) => server.app.gate.admitNow(caller, method);
    // The first call may claim the rate window's lease (a wait); the next ones are decided in memory.
    await server.app.gateway.handleText(text, server.app.gate.policy({ transport: 'http', token: alice, caller }));
    const now = server.app.gateway.answerNow(text, caller, admit);
    expect(now).toBeDefined();
    const full = await server.app.gateway.handleText(
      text,
      server.app.gate.policy({ transport: 'http', token: alice, caller }),
    );
    expect(now!.status).toBe(200);
    expect(replyJson(now!.body!)).toBe(replyJson(full.body!));
    expect(now!.rate).toMatchObject({ allowed: true, limit: full.rate!.limit, resetAt: full.rate!.resetAt });
  });

  it('leaves to the full path, counting nothing, whatever it cannot answer at once and successfully', async () => {
    const caller = await callerOf(bob);
    const admitted: string[] = [];
    const admit = (method: string) => {
      admitted.push(method);
      return server.app.gate.admitNow(caller, method);
    };
    const cases: unknown[] = [
      getProject(privateId), // another user's private project: -32003
      getProject('00000000-0000-4000-8000-000000000000'), // unknown: -32004
      getProject('not-a-uuid'), // -32602
      { ...getProject(publicId), params: { name: 'svc_get_project', arguments: { projectId: publicId, extra: 1 } } }, // -32602
      getProject(publicId, { _meta: { progressToken: 1 } }), // progress: the full path
      getProject(publicId, { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }), // the 2026-07-28 era
      { jsonrpc: '2.0', method: 'tools/call', params: getProject(publicId).params }, // a notification
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects', arguments: {} } }, // no answer at hand
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_nothing', arguments: {} } },
      [getProject(publicId)],
      { ...getProject(publicId), jsonrpc: '1.0' },
    ];
    for (const message of cases)
      expect(
        server.app.gateway.answerNow(JSON.stringify(message), caller, admit),
        JSON.stringify(message),
      ).toBeUndefined();
    expect(server.app.gateway.answerNow('{"jsonrpc":', caller, admit)).toBeUndefined();
    expect(admitted).toEqual([]);
    // Bob reads Alice's public project: answered at once once his rate window's lease is held.
    await server.app.gateway.handleText(
      JSON.stringify(getProject(publicId)),
      server.app.gate.policy({ transport: 'http', token: bob, caller }),
    );
    expect(server.app.gateway.answerNow(JSON.stringify(getProject(publicId)), caller, admit)?.status).toBe(200);
    expect(admitted).toEqual(['tools/call']);
  });

  it('over HTTP: the same reply as the full path (a request with _meta), and one count of the rate window per call, whichever path answers', async () => {
    const fast = await post(server.mcpUrl, getProject(publicId), alice);
    const full = await post(server.mcpUrl, getProject(publicId, { _meta: {} }), alice);
    expect(fast.status).toBe(200);
    expect(fast.text).toBe(full.text);
    for (const header of ['content-type', 'cache-control', 'x-ratelimit-limit', 'x-ratelimit-reset'])
      expect(fast.headers.get(header), header).toBe(full.headers.get(header));

    const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));
    const resetAt = (res: { headers: Headers }) => res.headers.get('x-ratelimit-reset');
    let last = await post(server.mcpUrl, getProject(publicId, { _meta: {} }), bob);
    const calls: Array<[unknown, number]> = [
      [getProject(publicId), 200],
      [getProject('00000000-0000-4000-8000-000000000000'), 404],
      [getProject(publicId), 200],
      [getProject('nope'), 400],
      [getProject(publicId, { _meta: {} }), 200],
      [getProject(publicId), 200],
      [getProject(privateId), 403],
      [getProject(publicId), 200],
    ];
    for (const [body, status] of calls) {
      const res = await post(server.mcpUrl, body, bob);
      expect(res.status, JSON.stringify(body)).toBe(status);
      // One count per call (unless the minute's window ended between the two calls).
      if (resetAt(res) === resetAt(last)) expect(remaining(res), JSON.stringify(body)).toBe(remaining(last) - 1);
      last = res;
    }
  });

  it('answers a polled svc_get_session from the cached view, byte for byte as the full path; a wait, a screenshot or a page of files takes the full path', async () => {
    const session = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'svc_get_session', arguments: { projectId: privateId, ...args }, ...extra },
    });
    const caller = await callerOf(alice);
    const admit = (method: string) => server.app.gate.admitNow(caller, method);
    const policy = server.app.gate.policy({ transport: 'http', token: alice, caller });
    // The first read fills the cache (the full path); the next poll is answered at once.
    const full = await server.app.gateway.handleText(JSON.stringify(session({})), policy);
    const now = server.app.gateway.answerNow(JSON.stringify(session({})), caller, admit);
    expect(now?.status).toBe(200);
    expect(replyJson(now!.body!)).toBe(replyJson(full.body!));
    for (const args of [{ waitSeconds: 1 }, { screenshot: true }, { questionFilesPage: 1 }]) {
      expect(
        server.app.gateway.answerNow(JSON.stringify(session(args)), caller, admit),
        JSON.stringify(args),
      ).toBeUndefined();
    }
    // Over HTTP: the same text as the full path (a request with _meta).
    const fast = await post(server.mcpUrl, session({}), alice);
    const slow = await post(server.mcpUrl, session({}, { _meta: {} }), alice);
    expect(fast.status).toBe(200);
    expect(fast.text).toBe(slow.text);
    // A send changes the session: the next poll is not answered from the old view.
    expect(
      (await callTool(server.mcpUrl, alice, 'svc_send_message', { projectId: privateId, message: 'build the app' }))
        .status,
    ).toBe(200);
    expect(server.app.gateway.answerNow(JSON.stringify(session({})), caller, admit)).toBeUndefined();
    const after = await post(server.mcpUrl, session({}), alice);
    expect(after.json.result.structuredContent.hasActiveWorkflows).toBe(true);
  });

  it('a read that fails on the fast path sends the call to the full path (which answers the failure), reporting nothing', async () => {
    const reported: string[] = [];
    const failing = defineTool({
      name: 'svc_failing_read',
      title: 'A read whose store is gone',
      description: 'test',
      input: z.strictObject({}),
      output: z.object({}),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handle: () => {
        throw new Error('the database connection is not open');
      },
      handleNow: () => {
        throw new Error('the database connection is not open');
      },
    });
    const dispatcher = new ToolDispatcher(
      [failing],
      {
        projects: server.app.projects,
        workflows: server.app.workflows,
        screenshots: server.app.screenshots,
        logger: server.app.logger,
      },
      { toolCalled: (tool, code) => reported.push(`${tool} ${code}`) },
    );
    const caller = await callerOf(alice);
    expect(dispatcher.callNow({ name: 'svc_failing_read', arguments: {} }, caller)).toBeUndefined();
    expect(reported).toEqual([]);
    await expect(dispatcher.call({ name: 'svc_failing_read', arguments: {} }, caller)).rejects.toThrow('not open');
    expect(reported).toEqual(['svc_failing_read -32603']);
  });

  it('reports each call answered at once to the metrics, once', async () => {
    const before = await toolCalls('ok');
    for (let i = 0; i < 5; i++) expect((await post(server.mcpUrl, getProject(publicId), alice)).status).toBe(200);
    expect(await toolCalls('ok')).toBe(before + 5);
  });

  it("refuses over the plan rate with the full path's -32005 and its headers", async () => {
    const limited = await startTestServer({
      plans: { free: { requestsPerMinute: 3, projectCreationsPerHour: 10, maxProjects: 10, maxQueuedWorkflows: 10 } },
    });
    try {
      const token = limited.token('carol');
      const id = (await createProject(limited.mcpUrl, token, { name: 'Limited' })).id;
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await post(limited.mcpUrl, getProject(id), token));
      expect(answers.map((a) => a.json.error?.code ?? 'ok')).toEqual(['ok', 'ok', -32005, -32005, -32005]);
      const full = await post(limited.mcpUrl, getProject(id, { _meta: {} }), token);
      const [, , , , last] = answers;
      expect(last!.status).toBe(full.status);
      expect(last!.json.error).toMatchObject({
        code: -32005,
        data: { scope: 'requests', limit: 3, resetAt: full.json.error.data.resetAt },
      });
      expect(full.json.error.code).toBe(-32005);
      for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
        expect(last!.headers.get(header), header).toBe(full.headers.get(header));
      expect(last!.headers.get('retry-after')).toBeTruthy();
    } finally {
      await limited.close();
    }
  });

  it('a revoked token is refused at once: the fast path never answers for a token the cache dropped', async () => {
    const token = server.token('dave');
    const id = (await createProject(server.mcpUrl, token, { name: 'Dave' })).id;
    expect((await callTool(server.mcpUrl, token, 'svc_get_project', { projectId: id })).status).toBe(200);
    const summary = (await server.app.tokens.list('dave')).find((t) => !t.revokedAt)!;
    await server.app.tokens.revoke(summary.id);
    const res = await callTool(server.mcpUrl, token, 'svc_get_project', { projectId: id });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe(-32001);
  });
});
