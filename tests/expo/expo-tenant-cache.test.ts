/**
 * Tenants share no transformed output: Expo inlines the app's public config (its name) into
 * `expo-constants` when Metro transforms it, so two projects whose code shows
 * `Constants.expoConfig?.name`, built one after the other on one server (one Metro cache folder),
 * must each get a bundle that holds its own name and not the other's.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

let server: TestServer;
let token: string;

beforeAll(async () => {
  await ensureToolchain();
  // The code agent copies an App.tsx that shows the app's name as Expo's constants give it.
  const fixture = join(tempDir(), 'App.tsx');
  writeFileSync(
    fixture,
    [
      "import Constants from 'expo-constants';",
      "import { Text } from 'react-native';",
      '',
      'export default function App() {',
      '  return <Text testID="name">{`manifest name: ${Constants.expoConfig?.name ?? \'none\'}`}</Text>;',
      '}',
      '',
    ].join('\n'),
  );
  server = await startExpoServer({ agent: 'command', agentCommand: `cp ${fixture} App.tsx` });
  token = server.token('alice');
});

afterAll(async () => {
  await server?.close();
});

/** The JavaScript of a project's web export, all files joined. */
function webBundle(projectId: string): string {
  const dir = join(server.dataDir, 'workspaces', projectId, '.svc', 'web', '_expo', 'static', 'js', 'web');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.js'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n');
}

describe('expo builder: tenants and the Metro cache', () => {
  it("gives each project a bundle with its own app config and never another project's", async () => {
    const names = ['Zebra Ledger Alpha', 'Yak Diary Beta'];
    const bundles: string[] = [];
    for (const name of names) {
      const project = await createProject(server.mcpUrl, token, { name });
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'show the app name',
        kind: 'build',
      });
      const session = await waitIdle(server.mcpUrl, token, project.id, 540_000);
      expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
      bundles.push(webBundle(project.id));
    }
    expect(bundles[0]).toContain(names[0]);
    expect(bundles[0]).not.toContain(names[1]);
    expect(bundles[1]).toContain(names[1]);
    expect(bundles[1]).not.toContain(names[0]);
  });
});
