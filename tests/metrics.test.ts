/**
 * The Prometheus metrics (docs/metrics.md), in process on a real HTTP listener with real SQLite:
 * after a scripted build and refused calls, `GET /metrics` shows the counters and histograms with
 * their labels and values that moved; the workflow gauges follow the store (a held build, a queued
 * one, a question); the reaper's takeover of a dead runner's lease is counted; no user, token,
 * project or workflow id (nor a user name) appears in the text; and who may read it (loopback, the
 * metrics token, `--metrics-public`), shown through a trusted proxy's `X-Forwarded-For` on a real
 * loopback socket on every machine, and from a real non-loopback address of this machine when it
 * has one.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_PLANS } from '../src/limits/plans.js';
import { isLoopbackAddress } from '../src/metrics/metrics-access.js';
import { ServiceMetrics } from '../src/metrics/service-metrics.js';
import { openStore } from '../src/store/store.js';
import {
  callTool,
  createProject,
  post,
  rawHttp,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  type TestServer,
} from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { sqliteOf } from './store-access.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serverWith(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const server = await startTestServer(...args);
  servers.push(server);
  return server;
}

/** `GET /metrics` at `base` through `node:http`, with `headers`. */
function scrape(base: string, headers: Record<string, string> = {}) {
  return rawHttp(`${base}/metrics`, { headers });
}

/** The value of the sample `name` whose labels are exactly `labels`, or undefined when the text has none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (
      Object.keys(got).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => got[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

/** The body of a loopback scrape of `server`, which must answer 200. */
async function metricsOf(server: TestServer): Promise<string> {
  const res = await scrape(server.http.url);
  expect(res.status).toBe(200);
  return res.text;
}

/** An IPv4 address of this machine that is not loopback, if it has one. */
function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

describe('GET /metrics after work', () => {
  it('shows tool calls by tool and code, /mcp refusals by status, the run histogram by builder, kind and outcome, and the process metrics; no id', async () => {
    const server = await serverWith({ metrics: {} });
    const token = server.token('alice');
    const before = await metricsOf(server);
    expect(sample(before, 'mbm_tool_calls_total', { tool: 'svc_create_project', code: 'ok' })).toBeUndefined();

    const project = await createProject(server.mcpUrl, token, { name: 'Metered' });
    const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Make a notes app',
      kind: 'build',
    });
    await waitIdle(server.mcpUrl, token, project.id);
    // Refused: a wrong token (401 at admission), an unknown project (-32004), a tool name that is
    // not one of ours (it carries the project id: it must not become a label).
    expect((await callTool(server.mcpUrl, 'svc_wrong', 'svc_list_projects', {})).status).toBe(401);
    expect((await callTool(server.mcpUrl, token, 'svc_get_project', { projectId: randomUUID() })).json.error.code).toBe(
      -32004,
    );
    expect((await callTool(server.mcpUrl, token, `svc_${project.id}`, {})).json.error.code).toBe(-32601);

    const res = await scrape(server.http.url);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.text;
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_create_project', code: 'ok' })).toBe(1);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_send_message', code: 'ok' })).toBe(1);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_get_session', code: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_list_projects', code: '-32001' })).toBe(1);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_get_project', code: '-32004' })).toBe(1);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'unknown', code: '-32601' })).toBe(1);
    // A raw client (no MCP-Protocol-Version) gets the table's statuses: 401, and 404 twice.
    expect(sample(text, 'mbm_http_refusals_total', { status: '401' })).toBe(1);
    expect(sample(text, 'mbm_http_refusals_total', { status: '404' })).toBe(2);
    const run = { builder: 'scripted', kind: 'build', outcome: 'completed' };
    expect(sample(text, 'mbm_workflow_run_duration_seconds_count', run)).toBe(1);
    expect(sample(text, 'mbm_workflow_run_duration_seconds_sum', run)).toBeGreaterThan(0);
    expect(sample(text, 'mbm_workflow_run_duration_seconds_bucket', { ...run, le: '+Inf' })).toBe(1);
    expect(sample(text, 'mbm_queue_depth')).toBe(0);
    expect(sample(text, 'mbm_store_up')).toBe(1);
    expect(sample(text, 'mbm_lease_takeovers_total')).toBe(0);
    expect(sample(text, 'mbm_process_cpu_user_seconds_total')).toBeGreaterThan(0);
    // SQLite has no connection pool: no pool gauges.
    expect(text).not.toContain('mbm_db_pool_');
    // Every metric is ours (prefixed), and no id or name of the run is in the text.
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^mbm_/);
    const userId = (
      sqliteOf(server.app.store).prepare("select id from users where name = 'alice'").get() as { id: string }
    ).id;
    const tokenId = (
      sqliteOf(server.app.store).prepare('select id from api_tokens where user_id = ?').get(userId) as { id: string }
    ).id;
    for (const secret of [userId, tokenId, token, project.id, sent.workflowId, 'alice', 'Metered'])
      expect(text).not.toContain(secret);
  });

  it('reads the workflow gauges from the store at each scrape: a held build, a queued one, then a question', async () => {
    const builder = new ManualBuilder();
    const server = await serverWith({ metrics: {}, builderInstance: builder, maxConcurrentWorkflows: 1 });
    const token = server.token('bob');
    const project = await createProject(server.mcpUrl, token);
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'first',
      kind: 'build',
    });
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'second',
      kind: 'build',
    });
    const first = await waitFor(() => builder.runs[0], 10_000, 'the first run');
    let text = await metricsOf(server);
    expect([
      sample(text, 'mbm_queue_depth'),
      sample(text, 'mbm_workflows_running'),
      sample(text, 'mbm_workflows_waiting'),
      sample(text, 'mbm_engine_runs'),
    ]).toEqual([1, 1, 0, 1]);
    first.ask();
    await waitFor(
      async () => sample(await metricsOf(server), 'mbm_workflows_waiting') === 1,
      10_000,
      'the question in the gauges',
    );
    text = await metricsOf(server);
    expect([
      sample(text, 'mbm_queue_depth'),
      sample(text, 'mbm_workflows_running'),
      sample(text, 'mbm_engine_runs'),
    ]).toEqual([1, 0, 0]);
    // Cancel the question's workflow: the queued one starts, then finishes.
    await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    const second = await waitFor(() => builder.runs[1], 10_000, 'the second run');
    second.finish();
    await waitIdle(server.mcpUrl, token, project.id);
    text = await metricsOf(server);
    expect([
      sample(text, 'mbm_queue_depth'),
      sample(text, 'mbm_workflows_running'),
      sample(text, 'mbm_workflows_waiting'),
      sample(text, 'mbm_engine_runs'),
    ]).toEqual([0, 0, 0, 0]);
    expect(
      sample(text, 'mbm_workflow_run_duration_seconds_count', {
        builder: 'manual',
        kind: 'build',
        outcome: 'cancelled',
      }),
    ).toBe(1);
    expect(
      sample(text, 'mbm_workflow_run_duration_seconds_count', {
        builder: 'manual',
        kind: 'build',
        outcome: 'completed',
      }),
    ).toBe(1);
  });

  it('measures the event-loop delay only while the engine holds a build, told by the engine (no timer looks)', async () => {
    const held = vi.spyOn(ServiceMetrics.prototype, 'heldChanged');
    try {
      const builder = new ManualBuilder();
      const server = await serverWith({ metrics: {}, builderInstance: builder });
      const token = server.token('hal');
      const project = await createProject(server.mcpUrl, token);
      const loopDelay = (text: string) => sample(text, 'mbm_build_event_loop_delay_seconds', { quantile: '1' });
      // No build yet: the monitor never ran, so the gauge has no sample.
      expect(loopDelay(await metricsOf(server))).toBeUndefined();
      expect(held).not.toHaveBeenCalled();
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'go',
        kind: 'build',
      });
      const run = await waitFor(() => builder.runs[0], 10_000, 'the run');
      await waitFor(
        async () => loopDelay(await metricsOf(server)) !== undefined,
        10_000,
        'the event-loop delay measured while the build is held',
      );
      run.finish();
      await waitIdle(server.mcpUrl, token, project.id);
      await waitFor(() => held.mock.calls.at(-1)?.[0] === 0, 10_000, 'the engine to report it holds nothing');
      // Claimed, then released: the count of runs went above 0 and back to 0.
      expect(Math.max(...held.mock.calls.map(([n]) => n))).toBeGreaterThan(0);
    } finally {
      held.mockRestore();
    }
  });

  it("counts the reaper's takeover of a workflow whose runner's lease expired", async () => {
    const server = await serverWith({ metrics: {} });
    const token = server.token('carol');
    const project = await createProject(server.mcpUrl, token);
    // A workflow another runner claimed and stopped renewing (its server died elsewhere).
    const now = new Date().toISOString();
    await server.app.store.repos.workflows.insert({
      id: randomUUID(),
      projectId: project.id,
      seq: await server.app.store.repos.workflows.nextSeq(),
      kind: 'build',
      status: 'running',
      instruction: 'orphan',
      stepIndex: 0,
      stepTotal: 0,
      stepName: null,
      runnerId: 'gone-host:1:dead',
      leaseExpiresAt: Date.now() - 1000,
      errorCode: null,
      errorMessage: null,
      createdAt: now,
      startedAt: now,
      finishedAt: null,
    });
    await waitFor(
      async () => sample(await metricsOf(server), 'mbm_lease_takeovers_total') === 1,
      10_000,
      'the takeover in the metrics',
    );
    const session = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(session.hasActiveWorkflows).toBe(false);
  });

  it('counts a call refused by the request rate under its tool (-32005) and as a 429, and a body over the limit as a 413', async () => {
    const server = await serverWith(
      { metrics: {}, plans: { free: { ...DEFAULT_PLANS.free!, requestsPerMinute: 2 } } },
      { bodyLimitBytes: 1024 },
    );
    const token = server.token('frank');
    for (let i = 0; i < 2; i++)
      expect((await callTool(server.mcpUrl, token, 'svc_list_projects', {})).status).toBe(200);
    expect((await callTool(server.mcpUrl, token, 'svc_list_projects', {})).status).toBe(429);
    const text = await metricsOf(server);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_list_projects', code: 'ok' })).toBe(2);
    expect(sample(text, 'mbm_tool_calls_total', { tool: 'svc_list_projects', code: '-32005' })).toBe(1);
    expect(sample(text, 'mbm_http_refusals_total', { status: '429' })).toBe(1);
    expect((await callTool(server.mcpUrl, token, 'svc_create_project', { name: 'x'.repeat(2000) })).status).toBe(413);
    expect(sample(await metricsOf(server), 'mbm_http_refusals_total', { status: '413' })).toBe(1);
    // Counted once: a second scrape shows the same totals.
    expect(sample(await metricsOf(server), 'mbm_tool_calls_total', { tool: 'svc_list_projects', code: 'ok' })).toBe(2);
  });

  it('shows the pool gauges of a store with a pool, and mbm_store_up 0 when the store does not answer', async () => {
    const dir = tempDir();
    const store = await openStore({ file: join(dir, 'store.db') });
    let inUse = 3;
    const metrics = new ServiceMetrics({
      store: { repos: store.repos, poolStats: () => ({ total: 10, idle: 10 - inUse, waiting: inUse > 9 ? 4 : 0 }) },
      localRuns: () => 0,
    });
    let text = await metrics.scrape();
    expect([
      sample(text, 'mbm_db_pool_total'),
      sample(text, 'mbm_db_pool_idle'),
      sample(text, 'mbm_db_pool_waiting'),
      sample(text, 'mbm_store_up'),
    ]).toEqual([10, 7, 0, 1]);
    inUse = 10;
    await store.close();
    text = await metrics.scrape();
    expect([
      sample(text, 'mbm_db_pool_idle'),
      sample(text, 'mbm_db_pool_waiting'),
      sample(text, 'mbm_store_up'),
    ]).toEqual([0, 4, 0]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not served without config.metrics, and nothing is counted', async () => {
    const server = await serverWith();
    expect(server.app.metrics).toBeUndefined();
    expect((await scrape(server.http.url)).status).toBe(404);
  });
});

describe('who may read /metrics', () => {
  it('loopback clients; a client behind a trusted proxy only with the metrics token (401 with WWW-Authenticate), or when the operator opened it', async () => {
    // A real loopback socket; the trusted proxy (loopback) names the client 203.0.113.9 (TEST-NET-3).
    const remote = { 'X-Forwarded-For': '203.0.113.9' };
    const closed = await serverWith({ metrics: {}, trustProxy: ['loopback'] });
    expect((await scrape(closed.http.url)).status).toBe(200);
    const forbidden = await scrape(closed.http.url, remote);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['content-type']).toBe('application/json');
    expect(JSON.parse(forbidden.text)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32003, data: { reason: 'metrics_loopback_only' } },
    });
    // A local proxy that is not declared trusted: its forwarded request is not a loopback client.
    const untrusted = await serverWith({ metrics: {} });
    expect((await scrape(untrusted.http.url, remote)).status).toBe(403);

    const withToken = await serverWith({ metrics: { token: 'scrape-secret' }, trustProxy: ['loopback'] });
    const missing = await scrape(withToken.http.url, remote);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(JSON.parse(missing.text)).toMatchObject({
      error: { code: -32001, data: { reason: 'metrics_token_required' } },
    });
    expect((await scrape(withToken.http.url, { ...remote, Authorization: 'Bearer not-it' })).status).toBe(401);
    const allowed = await scrape(withToken.http.url, { ...remote, Authorization: 'Bearer scrape-secret' });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('# TYPE mbm_tool_calls_total counter');
    // The MCP API token is not the metrics token.
    expect(
      (await scrape(withToken.http.url, { ...remote, Authorization: `Bearer ${withToken.token('dave')}` })).status,
    ).toBe(401);

    const open = await serverWith({ metrics: { public: true }, trustProxy: ['loopback'] });
    expect((await scrape(open.http.url, remote)).status).toBe(200);
  });

  const address = nonLoopbackAddress();
  it.skipIf(!address)(
    `refuses a client on a non-loopback address of this machine (${address ?? 'none here'}) without the token`,
    async () => {
      const server = await serverWith(
        { metrics: { token: 'scrape-secret' } },
        { host: '0.0.0.0', allowedHosts: [address!] },
      );
      const port = server.http.port;
      expect((await scrape(`http://127.0.0.1:${port}`)).status).toBe(200);
      const refused = await scrape(`http://${address}:${port}`);
      expect(refused.status).toBe(401);
      expect((await scrape(`http://${address}:${port}`, { Authorization: 'Bearer scrape-secret' })).status).toBe(200);
      const closed = await serverWith({ metrics: {} }, { host: '0.0.0.0', allowedHosts: [address!] });
      expect((await scrape(`http://${address}:${closed.http.port}`)).status).toBe(403);
    },
  );

  it('takes 127.0.0.0/8, ::1 and IPv4-mapped loopback for loopback, nothing else', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', 'fe80::1', '0.0.0.0', '', 'unknown', '128.0.0.1'])
      expect(isLoopbackAddress(a), a).toBe(false);
  });

  it('answers HEAD like GET without a body, and no other method', async () => {
    const server = await serverWith({ metrics: {} });
    const head = await rawHttp(`${server.http.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect((await post(`${server.http.url}/metrics`, {})).status).toBe(404);
  });
});
