/**
 * Releases on real Expo deploys (docs/releases.md), one project, SDK 58 only (the rules are the
 * same for every SDK; tests/expo/expo-deploy.test.ts covers both): an Expo-Go-shaped client (its
 * headers: `expo-platform`, `expo-runtime-version`, `expo-protocol-version`, `eas-client-id`)
 * follows the production channel through deploy #1, a staged rollout of deploy #2 at 50 % (after a
 * build that changes the app), the rollback to #1, and the restore of #2's checkpoint deployed as #4,
 * and always gets the manifest the docs say:
 * its launch asset is the deploy's own bundle. The deploy's result names the changed files (the
 * deterministic edits live in `src/app-settings.json`) and its page shows the diff; `deployments`
 * shows each state.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRollout } from '../../src/core/releases.js';
import { createProject, toolResult, waitIdle, waitQuestion, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

let server: TestServer;
let token: string;

beforeAll(async () => {
  await ensureToolchain();
  server = await startExpoServer({ sdks: [58] });
  token = server.token('alice');
});

afterAll(async () => {
  await server?.close();
});

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The manifest Expo Go (SDK 58, iOS) gets from `url`, as `eas-client-id` `clientId` (none when null). */
async function manifest(url: string, clientId: string | null): Promise<{ id: string; launchAsset: { url: string } }> {
  const answer = await get(url, {
    'expo-protocol-version': '1',
    'expo-platform': 'ios',
    'expo-runtime-version': 'exposdk:58.0.0',
    accept: 'application/expo+json,application/json',
    ...(clientId && { 'eas-client-id': clientId }),
  });
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body);
}

describe('expo builder: channel, staged rollout and rollback on real deploys', () => {
  it('a phone follows production through deploy #1, a 50 % rollout of #2, the rollback to #1 and a restore of #2 deployed', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Releases' });
    const projectId = project.id;
    const results = async (workflowId: string) =>
      (await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 500 })).messages
        .filter((m: any) => m.workflowId === workflowId && m.type === 'result')
        .map((m: any) => m.content as string);
    const done = async (workflowId: string) => {
      const session = await waitIdle(server.mcpUrl, token, projectId, 900_000);
      expect(session.lastWorkflow.id).toBe(workflowId);
      expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
      return session;
    };

    // Deploy #1: builds first, asks the app identifier once.
    const first = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'Deploy it',
      kind: 'deploy',
    });
    const asking = await waitQuestion(server.mcpUrl, token, projectId, 600_000);
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'com.example.releases',
      questionId: asking.pendingQuestion.questionId,
    });
    await done(first.workflowId);
    const note1 = (await results(first.workflowId)).at(-1)!;
    expect(note1).toContain('Deploy #1 on channel "production", to every phone of the channel.');
    const latest = `${server.http.url}${/(\/updates\/latest\/[A-Za-z0-9_-]{32})$/.exec(note1)![1]}`;
    const v1 = await manifest(latest, 'phone-0');
    expect(await manifest(latest, null)).toMatchObject({ id: v1.id });

    // A build that changes the app, then deploy #2 to half of the phones.
    const build = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'Set the subtitle to Second version',
      kind: 'build',
    });
    await done(build.workflowId);
    const second = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'Deploy the second version',
      kind: 'deploy',
      rolloutPercent: 50,
    });
    const rolled = await done(second.workflowId);
    const note2 = (await results(second.workflowId)).at(-1)!;
    expect(note2).toContain('Deploy #2 on channel "production", rolling out to 50 %');
    expect(note2).toMatch(/Changed since deploy #1: .*src\/app-settings\.json \(\+\d+ −\d+\)/);
    expect(rolled.deployments.map((d: any) => [d.number, d.state, d.rolloutPercent, d.sdks])).toEqual([
      [2, 'rolling_out', 50, [58]],
      [1, 'serving', 100, [58]],
    ]);
    const ids = Array.from({ length: 40 }, (_, i) => `0f6b3a52-2222-4000-8000-${String(i).padStart(12, '0')}`);
    const seen = new Map<string, string>();
    for (const id of ids) {
      const got = await manifest(latest, id);
      seen.set(id, got.id);
      expect(await manifest(latest, id)).toMatchObject({ id: got.id });
      if (inRollout('production', id, 50)) expect(got.id).not.toBe(v1.id);
      else expect(got.id).toBe(v1.id);
    }
    const v2 = [...seen.values()].find((id) => id !== v1.id)!;
    expect(v2).toBeDefined();
    expect(await manifest(latest, null)).toMatchObject({ id: v1.id });
    // Each launch asset is its deploy's own bundle, served.
    const inRolloutId = ids.find((id) => inRollout('production', id, 50))!;
    const v2Launch = (await manifest(latest, inRolloutId)).launchAsset.url;
    expect(v2Launch).not.toBe(v1.launchAsset.url);
    const v1Bundle = await get(v1.launchAsset.url);
    expect(v1Bundle.status).toBe(200);
    expect((await get(v2Launch)).body).not.toBe(v1Bundle.body);

    // Deploy #2's ios page shows the diff since #1.
    const page = rolled.lastWorkflow.previewUrls.find((u: any) => u.platform === 'ios' && u.kind === 'deployment');
    const landing = await get(page.url);
    expect(landing.status).toBe(200);
    expect(landing.body).toContain('Changes since deploy #1');
    expect(landing.body).toContain('Second version');

    // Rollback to #1: deploy #3 serves #1's update to every phone.
    const rollback = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: '#1',
      kind: 'rollback',
    });
    const back = await done(rollback.workflowId);
    expect(back.deployments.map((d: any) => [d.number, d.state])).toEqual([
      [3, 'serving'],
      [2, 'rolled_back'],
      [1, 'superseded'],
    ]);
    for (const id of [...ids.slice(0, 10), null]) expect(await manifest(latest, id)).toMatchObject({ id: v1.id });
    // Deploy #3's own copy of #1's bundle, byte for byte.
    const v3Launch = (await manifest(latest, inRolloutId)).launchAsset.url;
    expect(v3Launch).not.toBe(v1.launchAsset.url);
    expect((await get(v3Launch)).body).toBe(v1Bundle.body);
    expect(v1Bundle.body).not.toContain('Second version');

    // Restore deploy #2's checkpoint (a build with its files), then deploy #4: every phone of the
    // channel gets the second version again, from a bundle of its own.
    const restore = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: '#2',
      kind: 'restore',
    });
    expect(restore.kind).toBe('restore');
    await done(restore.workflowId);
    const told = (await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 500 })).messages
      .filter((m: any) => m.workflowId === restore.workflowId)
      .map((m: any) => m.content as string);
    expect(told.join('\n')).toMatch(/Restored Releases to the checkpoint of workflow .* \(deploy #2\)/);
    const fourth = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'Deploy the restored version',
      kind: 'deploy',
    });
    const restored = await done(fourth.workflowId);
    expect(restored.deployments.map((d: any) => [d.number, d.state])).toEqual([
      [4, 'serving'],
      [3, 'superseded'],
      [2, 'rolled_back'],
      [1, 'superseded'],
    ]);
    for (const id of [ids[0]!, inRolloutId, null]) {
      const got = await manifest(latest, id);
      expect(got.id).not.toBe(v1.id);
      expect((await get(got.launchAsset.url)).body).toContain('Second version');
    }
  });
});
