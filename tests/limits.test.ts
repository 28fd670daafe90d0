/**
 * Limits of docs/contract.md#limits-and-plans and the HTTP hardening of the README: exact counts under concurrency,
 * the stdio transport's rate limit, slow clients, the bound on concurrent requests, plan limits.
 */
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../src/limits/plans.js';
import { serveStdio } from '../src/transports/stdio-server.js';
import { callTool, post, startTestServer, toolResult, waitFor, type TestServer } from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const projectCount = (s: TestServer) =>
  (sqliteOf(s.app.store).prepare('select count(*) as n from projects').get() as { n: number }).n;

describe('request rate under concurrency', () => {
  it('50 concurrent clients on one key are served exactly 100 requests in a window', async () => {
    server = await startTestServer({ plans: DEFAULT_PLANS });
    const token = server.token('alice');
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async (_, client) => {
        const mine: number[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await post(
            server!.mcpUrl,
            { jsonrpc: '2.0', id: client * 10 + i, method: 'tools/call', params: { name: 'svc_list_projects' } },
            token,
          );
          mine.push(res.status);
        }
        return mine;
      }),
    );
    const flat = statuses.flat();
    expect(flat.filter((s) => s === 200)).toHaveLength(100);
    expect(flat.filter((s) => s === 429)).toHaveLength(50);
  });

  it('counts per API key: two keys of one user have a window each', async () => {
    server = await startTestServer({ plans: { free: { ...DEFAULT_PLANS.free!, requestsPerMinute: 3 } } });
    const [a, b] = [server.token('alice'), server.token('alice')];
    const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'svc_list_projects' } });
    for (let i = 0; i < 3; i++) expect((await post(server.mcpUrl, list(i), a)).status).toBe(200);
    expect((await post(server.mcpUrl, list(9), a)).status).toBe(429);
    expect((await post(server.mcpUrl, list(9), b)).status).toBe(200);
  });

  it('stdio tool calls count against the same per-key limit', async () => {
    server = await startTestServer({ plans: { free: { ...DEFAULT_PLANS.free!, requestsPerMinute: 2 } } });
    const token = server.token('alice');
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (d: Buffer) => (text += d.toString()));
    const done = serveStdio(server.app, { token, input, output });
    for (let i = 1; i <= 3; i++)
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_list_projects' } })}\n`,
      );
    await waitFor(() => text.split('\n').filter(Boolean).length === 3, 5000, 'three replies');
    input.end();
    await done;
    const replies = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .sort((x, y) => x.id - y.id);
    expect(replies.filter((r) => r.result)).toHaveLength(2);
    expect(replies[2].error).toMatchObject({ code: -32005, data: { scope: 'requests', limit: 2 } });
  });
});

describe('project creation limits', () => {
  it('20 concurrent creations by one user store exactly 10 projects; the rest get -32005 scope project_creation', async () => {
    server = await startTestServer({ plans: DEFAULT_PLANS });
    const token = server.token('alice');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => callTool(server!.mcpUrl, token, 'svc_create_project', { name: `p${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expect(r.json.error).toMatchObject({
        code: -32005,
        message: 'Rate limit exceeded - please slow down requests',
        data: { scope: 'project_creation', limit: 10 },
      });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(3000);
    }
    expect(projectCount(server)).toBe(10);
    expect((await toolResult(server.mcpUrl, token, 'svc_list_projects')).projects).toHaveLength(10);
  });

  it('the plan cap answers -32003 with reason project_limit_reached and stores nothing', async () => {
    server = await startTestServer({
      plans: { free: { requestsPerMinute: 1000, projectCreationsPerHour: 1000, maxProjects: 2 } },
    });
    const token = server.token('alice');
    await toolResult(server.mcpUrl, token, 'svc_create_project', { name: 'a' });
    await toolResult(server.mcpUrl, token, 'svc_create_project', { name: 'b' });
    const res = await callTool(server.mcpUrl, token, 'svc_create_project', { name: 'c' });
    expect(res.status).toBe(403);
    expect(res.json.error).toEqual({
      code: -32003,
      message: 'Access denied - you do not have permission for this resource',
      data: { reason: 'project_limit_reached', limit: 2, plan: 'free' },
    });
    expect(projectCount(server)).toBe(2);
  });
});

describe('HTTP hardening', () => {
  it('cuts a client that never finishes its headers, and keeps serving', async () => {
    server = await startTestServer({}, { headersTimeoutMs: 400, requestTimeoutMs: 800 });
    const url = new URL(server.http.url);
    const closed = await new Promise<{ ms: number; data: string }>((resolve) => {
      const started = Date.now();
      let data = '';
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      );
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => resolve({ ms: Date.now() - started, data }));
    });
    expect(closed.ms).toBeLessThan(5000);
    expect(closed.data).toMatch(/^HTTP\/1\.1 408/);
    expect((await fetch(`${server.http.url}/healthz`)).status).toBe(200);
  });

  it('cuts a client that sends its body too slowly, and keeps serving', async () => {
    server = await startTestServer({}, { headersTimeoutMs: 400, requestTimeoutMs: 800 });
    const url = new URL(server.http.url);
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":',
        );
      });
      socket.on('error', () => undefined);
      socket.resume();
      socket.on('close', () => resolve(Date.now() - started));
    });
    expect(closed).toBeLessThan(5000);
    const token = server.token('alice');
    expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, token)).status).toBe(200);
  });
});
