/**
 * Two kinds of HTTP client, one body (docs/contract.md "Errors"): an MCP client (it sends a supported
 * `MCP-Protocol-Version` after initialize) gets JSON-RPC errors of authenticated requests with
 * HTTP 200, so the SDK's StreamableHTTPClientTransport surfaces an `McpError` with the code and
 * `data`; a plain JSON-RPC client gets the table's statuses. And the limits of docs/contract.md "Limits and
 * plans": tool calls are counted apart from housekeeping, anonymous requests per address.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveStdio } from '../src/transports/stdio-server.js';
import {
  createProject,
  httpClient,
  post,
  rawHttp,
  startTestServer,
  waitFor,
  type TestServer,
  mcpError,
} from './helpers.js';

const VERSION = '2025-06-18';
const PLANS = {
  free: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 1, maxProjects: 1_000_000 },
  tight: { requestsPerMinute: 2, projectCreationsPerHour: 10, maxProjects: 10 },
};

let server: TestServer;
let alice: string;
let bob: string;
let dave: string;
let bobsPrivate: string;
let aliceClient: Client;
let daveClient: Client;

beforeAll(async () => {
  server = await startTestServer({ plans: PLANS });
  alice = server.token('alice');
  bob = server.token('bob');
  dave = server.token('dave');
  await server.app.tokens.setPlan('dave', 'tight');
  bobsPrivate = (await createProject(server.mcpUrl, bob, { name: 'Bob private' })).id;
  // alice uses her one creation of the hour, so the next one is the hourly creation limit.
  await createProject(server.mcpUrl, alice, { name: 'First' });
  aliceClient = await httpClient(server.mcpUrl, alice);
  daveClient = await httpClient(server.mcpUrl, dave);
});
afterAll(async () => {
  await aliceClient.close();
  await daveClient.close();
  await server.close();
});

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('SDK StreamableHTTPClientTransport (an MCP client): JSON-RPC errors arrive as McpError with code and data', () => {
  it('-32602 with data.issues for a malformed UUID', async () => {
    const error = await mcpError(
      aliceClient.callTool({ name: 'svc_get_project', arguments: { projectId: 'not-a-uuid' } }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('Invalid parameter: projectId');
    expect(error.data).toMatchObject({
      issues: [expect.objectContaining({ parameter: 'projectId', problem: 'must be a UUID' })],
    });
  });

  it('-32004 for an unknown project', async () => {
    const error = await mcpError(
      aliceClient.callTool({
        name: 'svc_get_project',
        arguments: { projectId: '00000000-0000-4000-8000-000000000000' },
      }),
    );
    expect(error.code).toBe(-32004);
    expect(error.message).toContain('Resource not found');
  });

  it("-32003 for another user's private project", async () => {
    const error = await mcpError(
      aliceClient.callTool({ name: 'svc_get_project', arguments: { projectId: bobsPrivate } }),
    );
    expect(error.code).toBe(-32003);
  });

  it('-32005 with data.scope for the hourly creation limit and for the request rate', async () => {
    const creation = await mcpError(
      aliceClient.callTool({ name: 'svc_create_project', arguments: { name: 'Second' } }),
    );
    expect(creation.code).toBe(-32005);
    expect(creation.data).toMatchObject({ scope: 'project_creation', limit: 1, windowSeconds: 3600 });
    await daveClient.callTool({ name: 'svc_list_projects', arguments: {} });
    await daveClient.callTool({ name: 'svc_list_projects', arguments: {} });
    const rate = await mcpError(daveClient.callTool({ name: 'svc_list_projects', arguments: {} }));
    expect(rate.code).toBe(-32005);
    expect(rate.data).toMatchObject({ scope: 'requests', limit: 2, windowSeconds: 60 });
    expect((rate.data as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // Housekeeping is not refused by the tool-call limit: the host still sees a live server.
    await daveClient.ping();
    expect((await daveClient.listTools()).tools).toHaveLength(7);
  });

  it('-32601 for an unknown tool and an unknown method', async () => {
    const tool = await mcpError(aliceClient.callTool({ name: 'svc_nope', arguments: {} }));
    expect(tool.code).toBe(-32601);
    expect(tool.message).toContain('Tool not found: svc_nope');
    const method = await mcpError(aliceClient.request({ method: 'resources/list' }, z.object({}).passthrough()));
    expect(method.code).toBe(-32601);
    expect(method.message).toContain('Method not found: resources/list');
  });
});

describe("the same requests by raw HTTP: the table's status without the header, 200 with it, the same body", () => {
  const cases: Array<[string, () => unknown, () => string, number]> = [
    ['-32602', () => toolCall(1, 'svc_get_project', { projectId: 'nope' }), () => alice, 400],
    [
      '-32004',
      () => toolCall(2, 'svc_get_project', { projectId: '00000000-0000-4000-8000-000000000000' }),
      () => alice,
      404,
    ],
    ['-32003', () => toolCall(3, 'svc_get_project', { projectId: bobsPrivate }), () => alice, 403],
    ['-32005', () => toolCall(4, 'svc_create_project', { name: 'Again' }), () => alice, 429],
    ['-32601', () => ({ jsonrpc: '2.0', id: 5, method: 'resources/list' }), () => alice, 404],
  ];
  it.each(cases)('%s', async (code, body, token, status) => {
    const plain = await post(server.mcpUrl, body(), token());
    expect(plain.status).toBe(status);
    expect(plain.json.error.code).toBe(Number(code));
    const mcp = await post(server.mcpUrl, body(), token(), { 'MCP-Protocol-Version': VERSION });
    expect(mcp.status).toBe(200);
    if (code === '-32005') {
      // retryAfterSeconds may tick between the two requests; everything else is the same.
      const strip = (t: string) => t.replace(/"retryAfterSeconds":\d+/, '');
      expect(strip(mcp.text)).toBe(strip(plain.text));
      expect(Number(mcp.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } else {
      expect(mcp.text).toBe(plain.text);
    }
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
      expect(mcp.headers.get(header), header).toBeTruthy();
  });

  it('-32005 of the request rate: 429 plain, 200 with the header, Retry-After and X-RateLimit-* in both', async () => {
    const carol = server.token('carol');
    await server.app.tokens.setPlan('carol', 'tight');
    const list = (id: number) => toolCall(id, 'svc_list_projects', {});
    expect((await post(server.mcpUrl, list(1), carol)).status).toBe(200);
    expect((await post(server.mcpUrl, list(2), carol)).status).toBe(200);
    const plain = await post(server.mcpUrl, list(3), carol);
    const mcp = await post(server.mcpUrl, list(3), carol, { 'MCP-Protocol-Version': VERSION });
    expect([plain.status, mcp.status]).toEqual([429, 200]);
    for (const res of [plain, mcp]) {
      expect(res.json.error).toMatchObject({ code: -32005, data: { scope: 'requests', limit: 2 } });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    }
  });

  it("keeps 401 and the transport's own refusals with the header: 401, 400 parse, 400 envelope, 403 foreign Host, 400 unsupported version", async () => {
    const header = { 'MCP-Protocol-Version': VERSION };
    const unauth = await post(server.mcpUrl, toolCall(1, 'svc_list_projects', {}), 'svc_unknown', header);
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post(server.mcpUrl, '{nope', alice, header)).status).toBe(400);
    expect((await post(server.mcpUrl, { id: 1, method: 'ping' }, alice, header)).status).toBe(400);
    const foreign = await rawHttp(server.mcpUrl, {
      method: 'POST',
      headers: {
        Host: 'evil.example',
        'Content-Type': 'application/json',
        Authorization: `Bearer ${alice}`,
        ...header,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(foreign.status).toBe(403);
    expect(
      (
        await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, alice, {
          'MCP-Protocol-Version': '1999-01-01',
        })
      ).status,
    ).toBe(400);
  });
});

describe('limits by kind of request', () => {
  it('housekeeping has its own per-key bound of 10x the plan rate', async () => {
    const erin = server.token('erin');
    await server.app.tokens.setPlan('erin', 'tight');
    for (let i = 0; i < 20; i++)
      expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: i, method: 'ping' }, erin)).status, `ping ${i}`).toBe(
        200,
      );
    const refused = await post(server.mcpUrl, { jsonrpc: '2.0', id: 21, method: 'ping' }, erin);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: -32005, data: { scope: 'housekeeping', limit: 20 } });
    // Tool calls have their own window, untouched by the pings.
    expect((await post(server.mcpUrl, toolCall(22, 'svc_list_projects', {}), erin)).status).toBe(200);
  });

  it('requests without a valid token are bounded per client address: 401 up to the bound, then 429 scope unauthenticated', async () => {
    const own = await startTestServer({ plans: PLANS, unauthenticatedPerMinute: 3 });
    try {
      const valid = own.token('gina');
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push(
          (await post(own.mcpUrl, { jsonrpc: '2.0', id: i, method: 'ping' }, i % 2 ? undefined : 'svc_wrong')).status,
        );
      expect(statuses).toEqual([401, 401, 401, 429]);
      const refused = await post(own.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'ping' }, undefined, {
        'MCP-Protocol-Version': VERSION,
      });
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ code: -32005, data: { scope: 'unauthenticated', limit: 3 } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
      // A valid token from the same address is not affected.
      expect((await post(own.mcpUrl, { jsonrpc: '2.0', id: 10, method: 'ping' }, valid)).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('over stdio the tool-call limit never refuses housekeeping', async () => {
    const frank = server.token('frank');
    await server.app.tokens.setPlan('frank', 'tight');
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (d: Buffer) => (text += d.toString()));
    const done = serveStdio(server.app, { token: frank, input, output });
    const lines = [
      toolCall(1, 'svc_list_projects', {}),
      toolCall(2, 'svc_list_projects', {}),
      toolCall(3, 'svc_list_projects', {}),
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
    ];
    for (const line of lines) input.write(`${JSON.stringify(line)}\n`);
    await waitFor(() => text.split('\n').filter(Boolean).length === 5, 5000, 'five replies');
    input.end();
    await done;
    const replies = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .sort((x, y) => x.id - y.id);
    expect(replies.map((r) => (r.error ? r.error.code : 'ok'))).toEqual(['ok', 'ok', -32005, 'ok', 'ok']);
  });
});
