/**
 * Parts of the `expo` builder that need no installed toolchain: the deterministic edits, manifest
 * negotiation, a new workspace (git, symlinked node_modules, size). The toolchain install against
 * an unreachable registry (npm, a process of its own) is `expo-toolchain-offline.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEdits } from '../src/builders/expo/deterministic-edits.js';
import { HeavyStepSemaphore } from '../src/builders/heavy-steps.js';
import { toolchainsFor } from '../src/builders/expo/index.js';
import { ExpoWorkspace, slugOf } from '../src/builders/expo/workspace.js';
import { negotiate } from '../src/builders/expo/update-routes.js';

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
    const first = heavy.run(
      new AbortController().signal,
      () => new Promise<string>((r) => (release = () => r('first'))),
    );
    const cancelled = new AbortController();
    let queued = 0;
    const second = heavy.run(
      cancelled.signal,
      async () => 'never',
      () => queued++,
    );
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
    const [toolchain] = toolchainsFor({ dataDir });
    const workspace = new ExpoWorkspace(join(dataDir, 'workspaces', 'p1'), toolchain);
    expect(await workspace.ensure({ name: 'Habit Tracker' })).toEqual({ created: true });
    expect(lstatSync(join(workspace.dir, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(workspace.dir, 'app.json'), 'utf8')).expo).toMatchObject({
      name: 'Habit Tracker',
      slug: 'habit-tracker',
    });
    expect(JSON.parse(readFileSync(join(workspace.dir, 'src', 'app-settings.json'), 'utf8')).name).toBe(
      'Habit Tracker',
    );
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
