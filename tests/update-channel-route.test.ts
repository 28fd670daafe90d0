/**
 * The "latest" update URL through the store (docs/postgresql.md#update-channels): the token a
 * build gets from its context is the one `/updates/latest/<token>` resolves over HTTP, it stays the
 * same for every later deploy, and a token an earlier version kept as a file still resolves after
 * the upgrade (imported at start).
 */
import { mkdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProject,
  rawHttp,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  type TestServer,
} from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A folder holding a minimal Expo update for ios (what the expo builder publishes). */
function updateFolder(): string {
  const dir = tempDir('mbm-update-');
  writeFileSync(join(dir, 'bundle.js'), 'console.log(1)');
  const asset = { path: 'bundle.js', hash: 'x', key: 'k', contentType: 'application/javascript', fileExtension: '.js' };
  writeFileSync(
    join(dir, 'expo-update.json'),
    JSON.stringify({
      format: 'expo-updates-v1',
      id: '11111111-2222-4333-8444-555555555555',
      createdAt: '2026-01-01T00:00:00.000Z',
      platform: 'ios',
      sdk: 58,
      runtimeVersions: ['exposdk:58.0.0'],
      launchAsset: asset,
      assets: [],
      expoClient: { name: 'A', slug: 'a' },
    }),
  );
  return dir;
}

const manifest = (base: string, token: string) =>
  rawHttp(`${base}/updates/latest/${token}`, {
    headers: { 'expo-platform': 'ios', 'expo-runtime-version': 'exposdk:58.0.0', accept: 'application/json' },
  });

/** Deploys one ios update of a new project through the manual builder; returns the project and the token the build got. */
async function deploy(
  builder: ManualBuilder,
  s: TestServer,
  owner: string,
  projectId?: string,
): Promise<{ projectId: string; token: string }> {
  const id = projectId ?? (await createProject(s.mcpUrl, owner, { name: 'App' })).id;
  const sent = await toolResult(s.mcpUrl, owner, 'svc_send_message', {
    projectId: id,
    message: 'Deploy it',
    kind: 'deploy',
  });
  const run = await waitFor(() => builder.runOf(sent.workflowId));
  await run.context.publish({ kind: 'deployment', platform: 'ios', sourceDir: updateFolder() });
  const token = await run.context.updateChannelToken();
  run.finish();
  await waitIdle(s.mcpUrl, owner, id);
  return { projectId: id, token };
}

describe('the latest update URL through the store', () => {
  it('resolves the token a build got from its context, the same for every deploy', async () => {
    const builder = new ManualBuilder();
    server = await startTestServer({ builderInstance: builder });
    const owner = server.token('olivia');
    const first = await deploy(builder, server, owner);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const answer = await manifest(server.http.url, first.token);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).id).toBe('11111111-2222-4333-8444-555555555555');
    const again = await deploy(builder, server, owner, first.projectId);
    expect(again.token).toBe(first.token);
    // Another project has another token; an unknown or malformed one is 404.
    const other = await deploy(builder, server, owner);
    expect(other.token).not.toBe(first.token);
    expect((await manifest(server.http.url, 'Z'.repeat(32))).status).toBe(404);
    expect((await manifest(server.http.url, 'short')).status).toBe(404);
  });

  it('a token an earlier version kept as a file still resolves after the upgrade', async () => {
    const builder = new ManualBuilder();
    const dataDir = tempDir('mbm-upgrade-');
    const first = await startTestServer({ builderInstance: builder, dataDir });
    const owner = first.token('olivia');
    const project = await createProject(first.mcpUrl, owner, { name: 'Old app' });
    const sent = await toolResult(first.mcpUrl, owner, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy it',
      kind: 'deploy',
    });
    const run = await waitFor(() => builder.runOf(sent.workflowId));
    await run.context.publish({ kind: 'deployment', platform: 'ios', sourceDir: updateFolder() });
    run.finish();
    await waitIdle(first.mcpUrl, owner, project.id);
    await first.http.close();
    await first.app.close();
    // A store an earlier version wrote: it kept the project's token in a file, not in the store.
    const db = new Database(join(dataDir, 'mobile-builder.db'));
    db.prepare('delete from update_channels').run();
    db.close();

    // What an earlier version wrote for this project.
    const legacy = 'L'.repeat(16) + '-_' + 'e'.repeat(14);
    const channels = join(dataDir, 'expo-updates', 'channels');
    mkdirSync(channels, { recursive: true });
    writeFileSync(join(channels, `project-${project.id}`), legacy);
    writeFileSync(join(channels, `token-${legacy}`), project.id);

    server = await startTestServer({ builderInstance: builder, dataDir });
    expect((await manifest(server.http.url, legacy)).status).toBe(200);
    expect(existsSync(channels)).toBe(false);
    // The builder's next deploy names the same URL.
    const next = await deploy(builder, server, owner, project.id);
    expect(next.token).toBe(legacy);
  });
});
