/**
 * Releases through the real server, engine and store, with the command builder's update
 * descriptions (docs/releases.md): an Expo-Go-shaped client (its headers: `expo-platform`,
 * `expo-runtime-version`, `expo-protocol-version`, `eas-client-id`) follows the production and
 * preview channels through deploys, a staged rollout and a rollback, and always gets the manifest
 * the docs say; `svc_get_session`'s `deployments` shows each deploy's state; each deploy's result
 * message names the files changed since its channel's previous deploy and its deployment page
 * shows the diff; a rollback names an existing deploy or is -32602 with the numbers that exist.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRollout } from '../src/core/releases.js';
import { listenHttp, type RunningHttpServer } from '../src/index.js';
import { callTool, createProject, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from './helpers.js';

/** The deploy command: App.tsx holds the instruction; an ios update whose id is the workflow's goes to dist/ios. */
const DEPLOY = [
  'printf "export const text = \'%s\';\\n" "$SVC_INSTRUCTION" > App.tsx',
  'mkdir -p dist/ios',
  'echo "console.log(\'$SVC_WORKFLOW_ID\')" > dist/ios/bundle.js',
  'printf \'{"format":"expo-updates-v1","id":"%s","createdAt":"2026-01-01T00:00:00.000Z","platform":"ios","sdk":58,"runtimeVersions":["exposdk:58.0.0"],"launchAsset":{"path":"bundle.js","hash":"x","key":"k","contentType":"application/javascript","fileExtension":".js"},"assets":[],"expoClient":{"name":"A","slug":"a"}}\' "$SVC_WORKFLOW_ID" > dist/ios/expo-update.json',
  'echo "::deployment ios dist/ios"',
].join('\n');

let server: TestServer;
let artifacts: RunningHttpServer;
let owner: string;
let projectId: string;
/** The project's latest update URL path of the production channel, from the first deploy's message. */
let latest: string;
/** The Expo update id (= the deploy workflow's id) of each deploy number. */
const updateOf = new Map<number, string>();

beforeAll(async () => {
  const dir = tempDir('mbm-releases-');
  const config = join(dir, 'builder.json');
  writeFileSync(config, JSON.stringify({ build: { command: 'true' }, deploy: { command: DEPLOY } }));
  server = await startTestServer({ builder: 'command', builderConfigFile: config });
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  owner = server.token('olivia');
  projectId = (await createProject(server.mcpUrl, owner, { name: 'Channels' })).id;
});

afterAll(async () => {
  await artifacts?.close();
  await server?.close();
});

/** A GET as Expo Go sends it to an updates URL; `clientId` null sends no `eas-client-id`. */
function phone(path: string, clientId: string | null): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(artifacts.url);
  const headers: Record<string, string> = {
    'expo-platform': 'ios',
    'expo-runtime-version': 'exposdk:58.0.0',
    'expo-protocol-version': '1',
    accept: 'application/expo+json,application/json',
    ...(clientId && { 'eas-client-id': clientId }),
  };
  return get(hostname, port, path, headers);
}

function get(hostname: string, port: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The update id the phone gets from `path`, or the status when it gets none. */
async function manifestId(path: string, clientId: string | null): Promise<string | number> {
  const answer = await phone(path, clientId);
  return answer.status === 200 ? (JSON.parse(answer.body) as { id: string }).id : answer.status;
}

/** Sends a deploy (or rollback) and waits for it; returns its workflow, its result messages and the session. */
async function release(args: Record<string, unknown>) {
  const sent = await toolResult(server.mcpUrl, owner, 'svc_send_message', { projectId, ...args });
  const session = await waitIdle(server.mcpUrl, owner, projectId);
  expect(session.lastWorkflow).toMatchObject({ id: sent.workflowId, status: 'completed' });
  const { messages } = await toolResult(server.mcpUrl, owner, 'svc_get_messages', { projectId, limit: 500 });
  const results = messages
    .filter((m: any) => m.workflowId === sent.workflowId && m.type === 'result')
    .map((m: any) => m.content as string);
  return { workflowId: sent.workflowId as string, results, session };
}

const states = (session: any) =>
  Object.fromEntries(session.deployments.map((d: any) => [d.number, `${d.channel}:${d.rolloutPercent}:${d.state}`]));

describe('channels, staged rollouts and rollback', () => {
  it('deploy #1 on production: every phone of the channel gets it', async () => {
    const first = await release({ message: 'v1', kind: 'deploy' });
    updateOf.set(1, first.workflowId);
    expect(first.results.at(-1)).toContain('Deploy #1 on channel "production", to every phone of the channel.');
    expect(first.results.at(-1)).toContain('The first deploy of channel "production"');
    latest = /(\/updates\/latest\/[A-Za-z0-9_-]{32})$/.exec(first.results.at(-1)!)![1]!;
    expect(first.session.deployments).toEqual([
      expect.objectContaining({
        number: 1,
        channel: 'production',
        rolloutPercent: 100,
        platforms: ['ios'],
        sdks: [58],
        workflowId: first.workflowId,
        state: 'serving',
      }),
    ]);
    expect(await manifestId(latest, 'phone-a')).toBe(first.workflowId);
    expect(await manifestId(latest, null)).toBe(first.workflowId);
  });

  it("deploy #2 on preview: its own URL, and neither channel gets the other one's update", async () => {
    const second = await release({ message: 'v2', kind: 'deploy', channel: 'preview' });
    updateOf.set(2, second.workflowId);
    expect(second.results.at(-1)).toContain('Deploy #2 on channel "preview"');
    expect(second.results.at(-1)).toContain(`${latest}/preview`);
    expect(await manifestId(`${latest}/preview`, 'phone-a')).toBe(second.workflowId);
    expect(await manifestId(latest, 'phone-a')).toBe(updateOf.get(1));
    // An unknown channel serves nothing; a malformed one is not a channel.
    expect(await manifestId(`${latest}/staging`, 'phone-a')).toBe(404);
    expect(await manifestId(`${latest}/Not_A_Channel`, 'phone-a')).toBe(404);
    expect(states(second.session)).toEqual({ 1: 'production:100:serving', 2: 'preview:100:serving' });
    // A browser gets the channel's page with its QR code.
    const { hostname, port } = new URL(artifacts.url);
    const page = await get(hostname, port, `${latest}/preview`, { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Channel preview</h1>');
    expect(page.body).toContain(`/preview</code>`);
  });

  it('deploy #3 at 30 %: the phones in the rollout get it, the others and phones without an id keep #1', async () => {
    const third = await release({ message: 'v3', kind: 'deploy', rolloutPercent: 30 });
    updateOf.set(3, third.workflowId);
    expect(third.results.at(-1)).toContain('Deploy #3 on channel "production", rolling out to 30 %');
    expect(third.results.at(-1)).toContain('Changed since deploy #1: App.tsx (+1 −1).');
    expect(states(third.session)).toEqual({
      1: 'production:100:serving',
      2: 'preview:100:serving',
      3: 'production:30:rolling_out',
    });
    const ids = Array.from({ length: 200 }, (_, i) => `5a1e0c2b-1111-4000-8000-${String(i).padStart(12, '0')}`);
    let inside = 0;
    for (const id of ids) {
      const expected = inRollout('production', id, 30) ? updateOf.get(3) : updateOf.get(1);
      if (expected === updateOf.get(3)) inside++;
      // Twice: a phone gets the same update on every request.
      expect(await manifestId(latest, id)).toBe(expected);
      expect(await manifestId(latest, id)).toBe(expected);
    }
    expect(inside).toBeGreaterThan(30);
    expect(inside).toBeLessThan(90);
    expect(await manifestId(latest, null)).toBe(updateOf.get(1));
    // The preview channel is untouched.
    expect(await manifestId(`${latest}/preview`, ids[0]!)).toBe(updateOf.get(2));
  });

  it("deploy #3's page shows the diff since #1", async () => {
    const ios = (await waitIdle(server.mcpUrl, owner, projectId)).previewUrls.find(
      (u: any) => u.kind === 'deployment' && u.platform === 'ios' && u.deployNumber === 3,
    );
    const { hostname, port } = new URL(artifacts.url);
    const page = await get(hostname, port, new URL(ios.url).pathname, {});
    expect(page.status).toBe(200);
    expect(page.body).toContain('Changes since deploy #1');
    expect(page.body).toContain('<code>App.tsx</code> +1 −1');
    expect(page.body).toContain('-export const text = &#39;v1&#39;;');
    expect(page.body).toContain('+export const text = &#39;v3&#39;;');
  });

  it('a rollback names an existing deploy: anything else is -32602 with the numbers that exist', async () => {
    for (const message of ['#9', '0', 'the last one']) {
      const res = await callTool(server.mcpUrl, owner, 'svc_send_message', { projectId, message, kind: 'rollback' });
      expect(res.json.error.code).toBe(-32602);
      expect(res.json.error.data.numbers).toEqual([1, 2, 3]);
      expect(res.json.error.message).toContain('#1, #2, #3');
    }
    const other = await createProject(server.mcpUrl, owner, { name: 'Other' });
    const foreign = await callTool(server.mcpUrl, owner, 'svc_send_message', {
      projectId: other.id,
      message: '3',
      kind: 'rollback',
    });
    expect(foreign.json.error).toMatchObject({ code: -32602, data: { numbers: [] } });
    const misplaced = await callTool(server.mcpUrl, owner, 'svc_send_message', {
      projectId,
      message: '1',
      kind: 'rollback',
      channel: 'preview',
    });
    expect(misplaced.json.error.code).toBe(-32602);
    expect(misplaced.json.error.message).toBe('Invalid parameter: channel applies only to kind "deploy"');
    const bad = await callTool(server.mcpUrl, owner, 'svc_send_message', {
      projectId,
      message: 'v',
      kind: 'deploy',
      rolloutPercent: 0,
    });
    expect(bad.json.error.code).toBe(-32602);
  });

  it('rollback to #1: a new deploy #4 with its bundles ends the rollout; every production phone gets #1', async () => {
    const rollback = await release({ message: '#1', kind: 'rollback' });
    expect(rollback.session.lastWorkflow.kind).toBe('rollback');
    expect(rollback.results.at(-1)).toContain('Deploy #4: the rollback of channel "production" to deploy #1');
    expect(rollback.results.at(-1)).toContain('Changed since deploy #3: App.tsx (+1 −1).');
    expect(states(rollback.session)).toEqual({
      1: 'production:100:superseded',
      2: 'preview:100:serving',
      3: 'production:30:rolled_back',
      4: 'production:100:serving',
    });
    expect(rollback.session.deployments[0]).toMatchObject({ number: 4, rollbackOf: 1, platforms: ['ios'], sdks: [58] });
    for (const id of ['phone-a', 'phone-b', '5a1e0c2b-1111-4000-8000-000000000000', null])
      expect(await manifestId(latest, id)).toBe(updateOf.get(1));
    expect(await manifestId(`${latest}/preview`, 'phone-a')).toBe(updateOf.get(2));
  });
});
