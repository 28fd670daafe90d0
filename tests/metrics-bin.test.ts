/**
 * `GET /metrics` on the built bin (docs/metrics.md), raw HTTP on port 0: `serve --http` counts
 * and serves the metrics, with the metrics token from `SVC_METRICS_TOKEN`; after a scripted build
 * and a refused call they show the moved counters and the run histogram, and name no id; a client
 * off loopback needs the token (shown from a non-loopback address of this machine when it has
 * one: the server is then bound to every interface). A stdio server has no metrics and never
 * loads prom-client (tests/stdio-startup.test.ts).
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, createProject, rawHttp, tempDir, toolResult, waitIdle } from './helpers.js';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';

const METRICS_TOKEN = 'bin-scrape-secret';
const address = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

let server: SpawnedServer;
let token: string;

beforeAll(async () => {
  const dataDir = tempDir();
  token = cliToken(dataDir, 'erin');
  const host = address ? ['--host', '0.0.0.0', '--allowed-hosts', address] : [];
  server = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10', ...host], { SVC_METRICS_TOKEN: METRICS_TOKEN });
});
afterAll(async () => {
  await server.stop();
});

/** The value of the sample `name{labels}` (labels exactly as given, in order), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics on the spawned bin', () => {
  it('shows the build, the tool calls and the refusal after they happen, in the Prometheus text format, with no id', async () => {
    const before = await rawHttp(`${server.url}/metrics`);
    expect(before.status).toBe(200);
    expect(sample(before.text, 'mbm_tool_calls_total{tool="svc_create_project",code="ok"}')).toBeUndefined();

    const project = await createProject(server.mcpUrl, token, { name: 'Bin metrics' });
    const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build it',
      kind: 'build',
    });
    await waitIdle(server.mcpUrl, token, project.id);
    expect((await callTool(server.mcpUrl, undefined, 'svc_list_projects', {})).status).toBe(401);

    const after = await rawHttp(`${server.url}/metrics`);
    expect(after.status).toBe(200);
    expect(after.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(sample(after.text, 'mbm_tool_calls_total{tool="svc_create_project",code="ok"}')).toBe(1);
    expect(sample(after.text, 'mbm_tool_calls_total{tool="svc_send_message",code="ok"}')).toBe(1);
    expect(sample(after.text, 'mbm_tool_calls_total{tool="svc_list_projects",code="-32001"}')).toBe(1);
    expect(sample(after.text, 'mbm_http_refusals_total{status="401"}')).toBe(1);
    expect(
      sample(
        after.text,
        'mbm_workflow_run_duration_seconds_count{builder="scripted",kind="build",outcome="completed"}',
      ),
    ).toBe(1);
    expect(sample(after.text, 'mbm_queue_depth')).toBe(0);
    expect(sample(after.text, 'mbm_process_resident_memory_bytes')).toBeGreaterThan(0);
    for (const id of [project.id, sent.workflowId, token, 'erin', METRICS_TOKEN]) expect(after.text).not.toContain(id);
    // The token is never logged either.
    expect(server.stderr()).not.toContain(METRICS_TOKEN);
  });

  it.skipIf(!address)(
    `refuses a client on ${address ?? 'a non-loopback address (none here)'} without the metrics token`,
    async () => {
      const port = new URL(server.url).port;
      const refused = await rawHttp(`http://${address}:${port}/metrics`);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(JSON.parse(refused.text)).toMatchObject({
        error: { code: -32001, data: { reason: 'metrics_token_required' } },
      });
      expect(
        (await rawHttp(`http://${address}:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).status,
      ).toBe(401);
      const allowed = await rawHttp(`http://${address}:${port}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(allowed.status).toBe(200);
      expect(allowed.text).toContain('# TYPE mbm_workflow_run_duration_seconds histogram');
    },
  );
});
