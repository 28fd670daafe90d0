/**
 * A `command` builder's update descriptions are checked before a deploy publishes them (docs/builders.md
 * "Expo updates"): an `expo-update.json` whose asset path leaves its folder fails the deploy with
 * the reason and publishes nothing (the manifest used to be served, its asset refused); a valid
 * one is published and served.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../src/builders/process-sandbox.js';
import { createProject, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from './helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A deploy command that writes `out/` with one asset and the description `$UPDATE_JSON`, and publishes it for iOS. */
const DEPLOY = [
  'mkdir -p out/assets && printf "bundle" > out/index.hbc && printf "png" > out/assets/a',
  'printf "%s" "$UPDATE_JSON" > out/expo-update.json',
  'echo "::deployment ios out"',
].join('\n');

function description(assetPath: string): string {
  const asset = (path: string) => ({ path, hash: 'h', key: 'k', contentType: 'application/octet-stream' });
  return JSON.stringify({
    format: 'expo-updates-v1',
    id: '1b0f1f0e-0000-4000-8000-000000000000',
    createdAt: '2026-01-01T00:00:00.000Z',
    platform: 'ios',
    sdk: 54,
    runtimeVersions: ['exposdk:54.0.0'],
    launchAsset: asset('index.hbc'),
    assets: [asset(assetPath)],
    expoClient: { name: 'x' },
  });
}

async function deployWith(updateJson: string) {
  const dir = tempDir('mbm-update-');
  const file = join(dir, 'builder.json');
  writeFileSync(
    file,
    JSON.stringify({ build: { command: 'true' }, deploy: { command: DEPLOY }, env: { UPDATE_JSON: updateJson } }),
  );
  server = await startTestServer({ builder: 'command', builderConfigFile: file, buildSandbox: SANDBOX_TURNED_OFF });
  const token = server.token('alice');
  const project = await createProject(server.mcpUrl, token);
  await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'Deploy it',
    kind: 'deploy',
  });
  return waitIdle(server.mcpUrl, token, project.id);
}

it('an asset path that leaves the update folder fails the deploy with the reason, and nothing is published', async () => {
  const done = await deployWith(description('../../../../etc/passwd'));
  expect(done.lastWorkflow).toMatchObject({ status: 'failed', error: { code: 'invalid_update' } });
  expect(done.lastWorkflow.error.message).toBe(
    'The deployment in out was not published: expo-update.json: asset path "../../../../etc/passwd" leaves the update folder (it must be relative, with no "..", "." or empty segment).',
  );
  expect(done.previewUrls).toEqual([]);
});

it('a valid description is published', async () => {
  const done = await deployWith(description('assets/a'));
  expect(done.lastWorkflow).toMatchObject({ status: 'completed' });
  expect(done.previewUrls.map((u: { platform: string; kind: string }) => [u.platform, u.kind])).toEqual([
    ['ios', 'deployment'],
  ]);
});
