/**
 * Tenants share no transformed output: Expo inlines the app's public config (its name) into
 * `expo-constants` when Metro transforms it, so two projects whose code shows
 * `Constants.expoConfig?.name`, built one after the other on one server (one Metro cache folder),
 * must each get a bundle that holds its own name and not the other's. And an export sees no other
 * project's cache: the code agent also writes a Babel config (code that runs inside the export)
 * that records what of the Metro cache it can list; with the build sandbox, only its own project's
 * folder.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectBuildSandbox } from '../../src/builders/process-sandbox.js';
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
  // Loaded by Metro's Babel transformer inside the export: lists the folder that holds the
  // export's Metro cache (`SVC_METRO_CACHE_DIR`), as a planted transform could.
  const probe = join(tempDir(), 'babel.config.js');
  writeFileSync(
    probe,
    [
      "const fs = require('fs');",
      "const path = require('path');",
      'module.exports = function (api) {',
      '  api.cache(true);',
      '  const own = process.env.SVC_METRO_CACHE_DIR;',
      '  const seen = own ? fs.readdirSync(path.dirname(own)) : [];',
      "  fs.writeFileSync(path.join(__dirname, 'metro-cache-seen.json'), JSON.stringify({ own, seen }));",
      "  return { presets: ['babel-preset-expo'] };",
      '};',
      '',
    ].join('\n'),
  );
  server = await startExpoServer({
    agent: 'command',
    agentCommand: `cp ${fixture} App.tsx && cp ${probe} babel.config.js`,
  });
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
    const ids: string[] = [];
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
      ids.push(project.id);
    }
    expect(bundles[0]).toContain(names[0]);
    expect(bundles[0]).not.toContain(names[1]);
    expect(bundles[1]).toContain(names[1]);
    expect(bundles[1]).not.toContain(names[0]);
    // Each export's cache is its project's folder, and beside it the export sees no other.
    for (const id of ids) {
      const file = join(server.dataDir, 'workspaces', id, 'metro-cache-seen.json');
      expect(existsSync(file), 'the Babel config ran inside the export').toBe(true);
      const { own, seen } = JSON.parse(readFileSync(file, 'utf8')) as { own: string; seen: string[] };
      expect(own.endsWith(`/${id}`)).toBe(true);
      if (detectBuildSandbox().kind === 'none') {
        process.stderr.write('no build sandbox here: what an export may list is not checked\n');
        continue;
      }
      expect(seen).toEqual([id]);
    }
  });
});
