/**
 * The `expo` builder end to end on the real SDK 58 toolchain: two projects, each built into a
 * real Expo web export, opened in headless Chromium; a second build is warm and keeps the
 * workspace's history in git.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../../src/app.js';
import type { RunningHttpServer } from '../../src/transports/http-server.js';
import { createProject, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { ensureToolchain, launchChromium, pageText, startExpoServer, TOOLCHAINS_CACHE } from './expo-helpers.js';

let server: TestServer;
let artifacts: RunningHttpServer;
let token: string;
let browser: Browser | null;

beforeAll(async () => {
  await ensureToolchain();
  server = await startExpoServer();
  // Previews from their own origin, as `serve --http` does.
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  token = server.token('alice');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await artifacts?.close();
  await server?.close();
});

async function build(projectId: string, message: string): Promise<any> {
  await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message, kind: 'build' });
  const session = await waitIdle(server.mcpUrl, token, projectId, 540_000);
  return session;
}

async function messages(projectId: string): Promise<string[]> {
  const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 200 });
  return page.messages.map((m: { content: string }) => m.content);
}

describe('expo builder: build', () => {
  it('builds two projects into real web apps that render in Chromium, and rebuilds warm', async () => {
    const habits = await createProject(server.mcpUrl, token, { name: 'Habit Tracker' });
    const session = await build(habits.id, 'A habit tracker. Make it green, with the subtitle "Daily streaks".');
    expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
    expect(session.lastWorkflow.step).toMatchObject({ index: 5, total: 5, name: 'Publishing the web preview' });
    const preview = session.previewUrls.find((p: { platform: string }) => p.platform === 'web');
    expect(preview.url).toMatch(/\/previews\/[0-9a-f-]{36}\/$/);
    // The project's own origin on the artifact listener (docs/builders.md "Previews and deployments").
    expect(new URL(preview.url).origin).toBe(artifacts.url.replace('127.0.0.1', `${habits.id}.localhost`));

    const said = await messages(habits.id);
    expect(said).toContain('Edit made: accent colour #30a46c (from "green").');
    expect(said).toContain('Edit made: subtitle "Daily streaks".');
    expect(said.some((m) => m.startsWith('No code agent is configured on this server'))).toBe(true);
    expect(said.some((m) => m.startsWith('Step 3/5: Type checking'))).toBe(true);
    // Tool output is posted without server paths.
    expect(said.some((m) => m.includes('Exported: <workspace>/.svc/web'))).toBe(true);
    expect(said.join('\n')).not.toContain(server.dataDir);
    // ... while the builder's own result names the preview's service path.
    expect(said.some((m) => m.includes(`published at ${new URL(preview.url).pathname}`))).toBe(true);

    // The workspace: sources + git + node_modules shared with the toolchain.
    const workspace = join(server.dataDir, 'workspaces', habits.id);
    expect(lstatSync(join(workspace, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(workspace, 'node_modules'))).toBe(join(TOOLCHAINS_CACHE, 'expo-sdk-58', 'node_modules'));
    const appJson = JSON.parse(readFileSync(join(workspace, 'app.json'), 'utf8'));
    expect(appJson.expo).toMatchObject({ name: 'Habit Tracker', slug: 'habit-tracker', experiments: { baseUrl: '.' } });
    const log = execFileSync('git', ['log', '--format=%s'], { cwd: workspace, encoding: 'utf8' }).trim().split('\n');
    expect(log).toHaveLength(2);

    if (browser) {
      const text = await pageText(browser, preview.url, 'Habit Tracker');
      expect(text).toContain('Daily streaks');
      expect(text).toContain('A habit tracker. Make it green');
      // On its own origin the preview keeps its origin: storage works as in the real app.
      const page = await browser.newPage();
      await page.goto(preview.url);
      expect(await page.evaluate<string | null>("(localStorage.setItem('k', 'v'), localStorage.getItem('k'))")).toBe(
        'v',
      );
      // The same files from the MCP listener run in an opaque origin: no storage shared with /mcp.
      await page.goto(`${server.http.url}${new URL(preview.url).pathname}`);
      expect(
        await page.evaluate<string>(
          "(() => { try { localStorage.getItem('k'); return 'readable'; } catch (e) { return e.name; } })()",
        ),
      ).toBe('SecurityError');
      await page.close();
    }

    // A second project: its first build reuses the toolchain and Metro's cache.
    const recipes = await createProject(server.mcpUrl, token, { name: 'Recipe Box' });
    const second = await build(recipes.id, 'A recipe box in dark mode');
    expect(second.lastWorkflow.status, JSON.stringify(second.lastWorkflow.error)).toBe('completed');
    expect(await messages(recipes.id)).toContain('Edit made: dark mode on.');
    if (browser) {
      const url = second.previewUrls.find((p: { platform: string }) => p.platform === 'web').url;
      expect(await pageText(browser, url, 'Recipe Box')).toContain('A recipe box in dark mode');
    }

    // A follow-up instruction on the first project: a warm rebuild, listed after the first.
    const again = await build(habits.id, 'Add a weekly summary, accent #ff8800');
    expect(again.lastWorkflow.status).toBe('completed');
    const saidAgain = await messages(habits.id);
    expect(saidAgain).toContain('Edit made: accent colour #ff8800.');
    // Only JSON values changed since the first build's passing check (docs/builders.md "Skipping the type check").
    expect(saidAgain.filter((m) => m.startsWith('Type check skipped: only JSON values changed'))).toHaveLength(1);
    if (browser) {
      const url = again.previewUrls.find((p: { platform: string }) => p.platform === 'web').url;
      const text = await pageText(browser, url, 'Add a weekly summary');
      expect(text).toContain('A habit tracker. Make it green');
    }
    const log2 = execFileSync('git', ['log', '--format=%s'], { cwd: workspace, encoding: 'utf8' }).trim().split('\n');
    expect(log2[0]).toBe('Add a weekly summary, accent #ff8800');
    // The commit prepared beside the export is the head, with every file of the build in it.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');
  });
});
