/**
 * Every row of the error table (docs/contract.md#errors) over raw HTTP: status, headers and exact body,
 * and that a refused call changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNAUTHENTICATED_HINT } from '../src/errors.js';
import { DEFAULT_PLANS } from '../src/limits/plans.js';
import { callTool, createProject, post, rawHttp, startTestServer, toolResult, type TestServer } from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let alice: string;
let bob: string;
let privateId: string;

const countProjects = () =>
  (sqliteOf(server.app.store).prepare('select count(*) as n from projects').get() as { n: number }).n;

beforeAll(async () => {
  server = await startTestServer({ plans: DEFAULT_PLANS });
  alice = server.token('alice');
  bob = server.token('bob');
  privateId = (await createProject(server.mcpUrl, alice, { name: 'Private' })).id;
});
afterAll(() => server.close());

describe('error table over HTTP', () => {
  it('-32700 / 400 for a body that is not JSON, with id null', async () => {
    const res = await post(server.mcpUrl, '{"jsonrpc": "2.0", "id": 1, "method": ', alice);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });

  it('-32600 / 400 without a JSON-RPC 2.0 envelope', async () => {
    for (const body of [
      { id: 7, method: 'tools/list' },
      { jsonrpc: '1.0', id: 7, method: 'tools/list' },
      [],
      42,
      { jsonrpc: '2.0', id: 7 },
      { jsonrpc: '2.0', id: 7, method: 5 },
    ]) {
      const res = await post(server.mcpUrl, body, alice);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toMatchObject({ code: -32600, message: 'Invalid request' });
    }
    const withId = await post(server.mcpUrl, { jsonrpc: '1.0', id: 7, method: 'x' }, alice);
    expect(withId.json.id).toBe(7);
  });

  it('-32601 / 404 for an unknown method and an unknown tool', async () => {
    const method = await post(server.mcpUrl, { jsonrpc: '2.0', id: 'a', method: 'resources/list' }, alice);
    expect(method.status).toBe(404);
    expect(method.json).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32601, message: 'Method not found: resources/list' },
    });
    const tool = await callTool(server.mcpUrl, alice, 'svc_delete_everything', {});
    expect(tool.status).toBe(404);
    expect(tool.json.error).toEqual({ code: -32601, message: 'Tool not found: svc_delete_everything' });
  });

  it('-32602 / 400 naming the missing parameter', async () => {
    const res = await callTool(server.mcpUrl, alice, 'svc_get_project', {});
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({
      code: -32602,
      message: 'Missing required parameter: projectId',
      data: { issues: [{ parameter: 'projectId', problem: 'is required' }] },
    });
  });

  it('-32602 / 400 for wrong types, lengths, enums, UUIDs and unknown parameters, listing every issue, storing nothing', async () => {
    const before = countProjects();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 5 }, 'Invalid parameter: name must be a string'],
      [{ name: 'x'.repeat(256) }, 'Invalid parameter: name must be at most 255 characters'],
      [{ name: '   ' }, 'Invalid parameter: name must not be empty or blank'],
      [{ name: '' }, 'Invalid parameter: name must not be empty or blank'],
      [{ name: 'ok', description: 'd'.repeat(1001) }, 'Invalid parameter: description must be at most 1000 characters'],
      [{ name: 'ok', visibility: 'secret' }, 'Invalid parameter: visibility must be one of "public", "private"'],
      [{ name: 'ok', owner: 'bob' }, 'Invalid parameter: owner is not a parameter of this tool'],
      [{ name: 'lone \uD800 surrogate' }, 'Invalid parameter: name must be valid Unicode text (no lone surrogates)'],
    ];
    for (const [args, message] of cases) {
      const res = await callTool(server.mcpUrl, alice, 'svc_create_project', args);
      expect(res.status, message).toBe(400);
      expect(res.json.error.code).toBe(-32602);
      expect(res.json.error.message).toBe(message);
    }
    const many = await callTool(server.mcpUrl, alice, 'svc_create_project', { name: 1, visibility: 'x', extra: true });
    expect(many.json.error.data.issues.map((i: any) => i.parameter).sort()).toEqual(['extra', 'name', 'visibility']);
    const uuid = await callTool(server.mcpUrl, alice, 'svc_get_project', { projectId: 'not-a-uuid' });
    expect(uuid.json.error.message).toBe('Invalid parameter: projectId must be a UUID');
    expect(countProjects()).toBe(before);
  });

  it('counts lengths in code points: 255 emoji are a valid name, 256 are not', async () => {
    const ok = await callTool(server.mcpUrl, alice, 'svc_create_project', { name: '😀'.repeat(255) });
    expect(ok.status).toBe(200);
    expect(ok.json.result.structuredContent.name).toBe('😀'.repeat(255));
    const tooLong = await callTool(server.mcpUrl, alice, 'svc_create_project', { name: '😀'.repeat(256) });
    expect(tooLong.json.error.message).toBe('Invalid parameter: name must be at most 255 characters');
  });

  it('-32603 / 500 with the bare message and no SQL or stack when the store fails', async () => {
    const broken = await startTestServer();
    const token = broken.token('carol');
    sqliteOf(broken.app.store).exec('DROP TABLE artifacts; ALTER TABLE projects RENAME TO projects_gone');
    const res = await callTool(broken.mcpUrl, token, 'svc_list_projects');
    expect(res.status).toBe(500);
    expect(res.json.error).toEqual({ code: -32603, message: 'Internal error' });
    expect(res.text).not.toMatch(/projects|sqlite|at \w+ \(/i);
    await broken.close();
  });

  it('-32001 / 401 with WWW-Authenticate for a missing, malformed, unknown, expired or revoked token', async () => {
    const expired = await server.app.tokens.create('alice', 1);
    const revoked = await server.app.tokens.create('alice');
    await server.app.tokens.revoke(revoked.summary.id);
    await new Promise((r) => setTimeout(r, 5));
    const attempts: Array<[string | undefined, Record<string, string>]> = [
      [undefined, {}],
      [undefined, { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ['svc_unknown', {}],
      [expired.token, {}],
      [revoked.token, {}],
    ];
    for (const [token, headers] of attempts) {
      const res = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } },
        token,
        headers,
      );
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.json).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32001,
          message: 'Authentication failed - invalid or expired API key',
          data: { hint: UNAUTHENTICATED_HINT },
        },
      });
      // The hint tells a model this -32001 from the SDK client's own "Request timed out".
      expect(UNAUTHENTICATED_HINT).toMatch(/check the message.*Request timed out.*not a token problem/is);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const init = await post(server.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} });
    expect(init.status).toBe(401);
    const notification = await post(server.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(401);
  });

  it("-32003 / 403 for another user's private project", async () => {
    const res = await callTool(server.mcpUrl, bob, 'svc_get_project', { projectId: privateId });
    expect(res.status).toBe(403);
    expect(res.json.error).toEqual({
      code: -32003,
      message: 'Access denied - you do not have permission for this resource',
    });
  });

  it('-32004 / 404 for an unknown project', async () => {
    const res = await callTool(server.mcpUrl, alice, 'svc_get_project', {
      projectId: '3f1d2c4b-0000-4000-8000-000000000000',
    });
    expect(res.status).toBe(404);
    expect(res.json.error).toEqual({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'project', reason: 'unknown id' },
    });
  });

  it('-32005 / 429 with Retry-After and rate headers past 100 tool calls a minute; housekeeping still answers', async () => {
    const carol = server.token('carol');
    let last;
    for (let i = 0; i < 100; i++) {
      last = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_list_projects' } },
        carol,
      );
      expect(last.status).toBe(200);
    }
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 101, method: 'tools/call', params: { name: 'svc_list_projects' } },
      carol,
    );
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({
      code: -32005,
      message: 'Rate limit exceeded - please slow down requests',
      data: { scope: 'requests', limit: 100 },
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = Number(refused.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    expect(refused.json.error.data.resetAt).toBe(reset);
    // Housekeeping has its own bound (10x), so a limited key's host still sees a live server.
    const ping = await post(server.mcpUrl, { jsonrpc: '2.0', id: 102, method: 'ping' }, carol);
    expect(ping.status).toBe(200);
    expect(ping.headers.get('x-ratelimit-limit')).toBe('1000');
    expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: 103, method: 'tools/list' }, carol)).status).toBe(200);
    // Another key of another user is not affected.
    expect(
      (
        await post(
          server.mcpUrl,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } },
          bob,
        )
      ).status,
    ).toBe(200);
  });
});

describe('HTTP transport', () => {
  it('GET /healthz answers 200 {"status":"ok","role":"all"}', async () => {
    const res = await fetch(server.http.url + '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', role: 'all' });
  });

  it('answers initialize with JSON, notifications with 202, GET /mcp with 405', async () => {
    const init = await post(
      server.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      alice,
    );
    expect(init.status).toBe(200);
    expect(init.json.result.serverInfo.name).toBe('mobile-builder-mcp');
    expect(init.json.result.protocolVersion).toBe('2025-06-18');
    // Housekeeping counts against its own per-key bound: 10 times the plan's tool-call rate.
    expect(init.headers.get('x-ratelimit-limit')).toBe('1000');
    const note = await post(server.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, alice);
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    const get = await fetch(server.mcpUrl, { headers: { Authorization: `Bearer ${alice}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('refuses an unsupported MCP-Protocol-Version header with 400, accepts a supported one', async () => {
    const bad = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, alice, {
      'MCP-Protocol-Version': '1999-01-01',
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({
      code: -32600,
      message: 'Invalid request',
      data: { reason: 'unsupported MCP-Protocol-Version' },
    });
    const good = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, alice, {
      'MCP-Protocol-Version': '2025-06-18',
    });
    expect(good.status).toBe(200);
  });

  it("validates initialize parameters with the table's -32602", async () => {
    const res = await post(
      server.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      alice,
    );
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe('Missing required parameter: params.protocolVersion');
  });

  it('refuses foreign Host and Origin headers (DNS rebinding) with 403', async () => {
    const host = await rawHttp(server.mcpUrl, {
      method: 'POST',
      headers: { Host: 'evil.example:80', Authorization: `Bearer ${alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.text).error).toMatchObject({ code: -32003, data: { reason: 'host_not_allowed' } });
    const origin = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, alice, {
      Origin: 'http://evil.example',
    });
    expect(origin.status).toBe(403);
    expect(origin.json.error.data.reason).toBe('origin_not_allowed');
    const local = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, alice, {
      Origin: server.http.url,
    });
    expect(local.status).toBe(200);
  });

  it('answers two clients that use the same request id independently', async () => {
    const [a, b] = await Promise.all([
      post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } },
        alice,
      ),
      post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } }, bob),
    ]);
    expect(a.json.id).toBe(1);
    expect(b.json.id).toBe(1);
    expect(a.json.result.structuredContent.projects.length).toBeGreaterThan(0);
    expect(b.json.result.structuredContent.projects).toEqual([]);
  });

  it('rejects a body over the cap with 413 and a JSON-RPC error, and keeps serving', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_create_project', arguments: { name: 'x'.repeat(1024 * 1024) } },
    });
    const res = await post(server.mcpUrl, big, alice);
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({
      code: -32600,
      message: 'Invalid request',
      data: { reason: 'body_too_large', limitBytes: 1048576 },
    });
    expect((await toolResult(server.mcpUrl, alice, 'svc_list_projects')).projects.length).toBeGreaterThan(0);
  });
});
