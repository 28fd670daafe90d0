/**
 * Parts of the `expo` builder that need no installed toolchain: the deterministic edits, manifest
 * negotiation, a new workspace (git, symlinked node_modules, size), and a toolchain install
 * against an unreachable registry, which fails clearly (through a real server workflow).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEdits } from '../src/builders/expo/deterministic-edits.js';
import { HeavyStepSemaphore } from '../src/builders/heavy-steps.js';
import { toolchainFor } from '../src/builders/expo/index.js';
import { ExpoWorkspace, slugOf } from '../src/builders/expo/workspace.js';
import { negotiate } from '../src/builders/expo/update-routes.js';
import { createProject, startTestServer, toolResult, waitIdle, type TestServer } from './helpers.js';

describe('deterministic edits', () => {
  it('reads colours, dark mode and subtitles from an instruction', () => {
    expect(parseEdits('Make it green')).toEqual({ accentColor: { value: '#30a46c', from: 'green' } });
    expect(parseEdits('accent #FF8800 please')).toEqual({ accentColor: { value: '#ff8800', from: '#FF8800' } });
    expect(parseEdits('use dark mode')).toEqual({ darkMode: true });
    expect(parseEdits('no dark mode any more')).toEqual({ darkMode: false });
    expect(parseEdits('switch to light mode')).toEqual({ darkMode: false });
    expect(parseEdits('with the subtitle "Daily streaks"')).toEqual({ subtitle: 'Daily streaks' });
    expect(parseEdits('set the subtitle to Track every day. Thanks')).toEqual({ subtitle: 'Track every day' });
    expect(parseEdits('a habit tracker with reminders')).toEqual({});
    expect(parseEdits('issue #123 fix')).toEqual({ accentColor: { value: '#123', from: '#123' } });
  });

  it('makes slugs', () => {
    expect(slugOf('My Habit Tracker!')).toBe('my-habit-tracker');
    expect(slugOf('日本')).toBe('app');
  });
});

describe('heavy step semaphore', () => {
  it('runs one step at a time and drops a cancelled waiter at once', async () => {
    const heavy = new HeavyStepSemaphore(1);
    let release!: () => void;
    const first = heavy.run(new AbortController().signal, () => new Promise<string>((r) => (release = () => r('first'))));
    const cancelled = new AbortController();
    let queued = 0;
    const second = heavy.run(cancelled.signal, async () => 'never', () => queued++);
    const third = heavy.run(new AbortController().signal, async () => 'third');
    expect(queued).toBe(1);
    cancelled.abort(new Error('cancelled'));
    await expect(second).rejects.toThrow('cancelled');
    expect(heavy.running).toBe(1);
    release();
    expect(await first).toBe('first');
    expect(await third).toBe('third');
    expect(heavy.running).toBe(0);
  });
});

describe('Expo Updates manifest negotiation', () => {
  it('honours accept and q-values', () => {
    expect(negotiate(null)).toBe('multipart/mixed');
    expect(negotiate('multipart/mixed,application/expo+json,application/json')).toBe('multipart/mixed');
    expect(negotiate('application/expo+json')).toBe('application/expo+json');
    expect(negotiate('application/json;q=0.5, application/expo+json;q=0.9')).toBe('application/expo+json');
    expect(negotiate('*/*')).toBe('multipart/mixed');
    expect(negotiate('application/*')).toBe('application/expo+json');
    expect(negotiate('text/html')).toBeNull();
    expect(negotiate('multipart/mixed;q=0')).toBeNull();
  });
});

describe('expo workspace', () => {
  it('is created from the template with git, a node_modules symlink and a small footprint', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mbm-ws-'));
    const toolchain = toolchainFor({ dataDir });
    const workspace = new ExpoWorkspace(join(dataDir, 'workspaces', 'p1'), toolchain);
    expect(await workspace.ensure({ name: 'Habit Tracker' })).toEqual({ created: true });
    expect(lstatSync(join(workspace.dir, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(workspace.dir, 'app.json'), 'utf8')).expo).toMatchObject({ name: 'Habit Tracker', slug: 'habit-tracker' });
    expect(JSON.parse(readFileSync(join(workspace.dir, 'src', 'app-settings.json'), 'utf8')).name).toBe('Habit Tracker');
    expect(readFileSync(join(workspace.dir, '.gitignore'), 'utf8')).toMatch(/^node_modules$/m);
    expect(diskBytes(workspace.dir)).toBeLessThan(10 * 1024 * 1024);

    // A broken edit is undone by reset; identifiers are synced.
    const appTsx = join(workspace.dir, 'App.tsx');
    execFileSync('sh', ['-c', `echo broken > ${appTsx}; touch ${join(workspace.dir, 'src', 'stray.ts')}`]);
    await workspace.reset();
    expect(readFileSync(appTsx, 'utf8')).toContain('export default function App');
    expect(readdirSync(join(workspace.dir, 'src'))).toEqual(['app-settings.json']);
    expect(await workspace.syncAppConfig({ name: 'Habit Tracker', identifier: 'com.example.habits' })).toBe(true);
    expect(await workspace.commit('Set the identifier')).toBe(true);
    expect(await workspace.ensure({ name: 'Habit Tracker' })).toEqual({ created: false });
  });
});

function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    total += entry.isDirectory() ? diskBytes(path) : statSync(path).size;
  }
  return total;
}

describe('expo toolchain install without a registry', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  it('fails the build with toolchain_install_failed and says what to do (no hang)', async () => {
    server = await startTestServer({
      builder: 'expo',
      expo: {
        toolchainEnv: { npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: mkdtempSync(join(tmpdir(), 'mbm-npm-cache-')), npm_config_offline: 'false' },
      },
    });
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token, { name: 'Offline' });
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'build it', kind: 'build' });
    const session = await waitIdle(server.mcpUrl, token, project.id, 240_000);
    expect(session.lastWorkflow.status).toBe('failed');
    expect(session.lastWorkflow.error.code).toBe('toolchain_install_failed');
    expect(session.lastWorkflow.error.message).toMatch(/npm registry could not be reached/);
    expect(session.lastWorkflow.error.message).toMatch(/mobile-builder-mcp toolchain install --sdk 56/);
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id });
    expect(page.messages.map((m: { content: string }) => m.content)).toContain('Installing the Expo SDK 56 toolchain (once per server, about 1-2 min)…');
    // Nothing half-installed is left to be mistaken for a toolchain.
    expect(readdirSync(join(server.dataDir, 'toolchains'))).toEqual([]);
  }, 300_000);
});
