/**
 * Checkpoints of the `expo` builder on the real SDK 58 toolchain (docs/builders.md "Checkpoints"):
 * every completed build publishes an export, a zip of the app's source on the project's own origin
 * (another project's origin answers 404); unzipped, it holds nothing of the service and `expo
 * export` builds it as it is (its `node_modules` linked to the toolchain: the machine is offline);
 * `kind: "restore"` makes the app an earlier checkpoint's files again as a new build, which the
 * session's `lastWorkflow` and the conversation name; later checkpoints stay listed; a name that is
 * no checkpoint of the project (a deploy number it lacks, another project's workflow) is -32602
 * naming those that exist.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../../src/app.js';
import type { RunningHttpServer } from '../../src/transports/http-server.js';
import {
  callTool,
  createProject,
  rawHttp,
  runCommand,
  tempDir,
  toolResult,
  waitIdle,
  type TestServer,
} from '../helpers.js';
import { ensureToolchain, startExpoServer, TOOLCHAINS_CACHE } from './expo-helpers.js';

let server: TestServer;
let artifacts: RunningHttpServer;
let token: string;

beforeAll(async () => {
  await ensureToolchain();
  server = await startExpoServer();
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  token = server.token('alice');
});

afterAll(async () => {
  await artifacts?.close();
  await server?.close();
});

async function run(projectId: string, message: string, kind: 'build' | 'restore'): Promise<any> {
  const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message, kind });
  expect(sent.kind).toBe(kind);
  const session = await waitIdle(server.mcpUrl, token, projectId, 540_000);
  expect(session.lastWorkflow.id).toBe(sent.workflowId);
  expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
  return session;
}

/** The files of a zip served at `url`, by path. */
async function zipAt(url: string): Promise<Record<string, Uint8Array>> {
  const response = await rawHttp(url);
  expect(response.status).toBe(200);
  expect(response.headers['content-disposition']).toBe('attachment');
  return unzipSync(new Uint8Array(response.body));
}

const settingsOf = (files: Record<string, Uint8Array>, root: string) =>
  JSON.parse(Buffer.from(files[`${root}/src/app-settings.json`]!).toString('utf8')) as { subtitle?: string };

describe('expo builder: checkpoints', () => {
  it('exports every build as a runnable zip, restores an earlier one as a new build, and refuses foreign names', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Check Points' });
    const first = await run(project.id, 'Make it green, with the subtitle "First version".', 'build');
    const second = await run(project.id, 'Make it blue, with the subtitle "Second version".', 'build');
    const [firstId, secondId] = [first.lastWorkflow.id, second.lastWorkflow.id];
    expect(second.checkpoints.map((c: any) => c.workflowId)).toEqual([secondId, firstId]);
    expect(second.checkpoints[0]).toMatchObject({ deployNumber: null, export: second.lastWorkflow.export });

    // The export: on the project's own origin, the app's source and nothing of the service.
    const url = new URL(second.lastWorkflow.export);
    expect(url.origin).toBe(artifacts.url.replace('127.0.0.1', `${project.id}.localhost`));
    expect(url.pathname).toMatch(/^\/exports\/[0-9a-f-]{36}\/source\.zip$/);
    const other = await createProject(server.mcpUrl, token, { name: 'Other' });
    const foreignOrigin = artifacts.url.replace('127.0.0.1', `${other.id}.localhost`);
    expect((await rawHttp(`${foreignOrigin}${url.pathname}`)).status).toBe(404);
    const files = await zipAt(url.href);
    const names = Object.keys(files);
    expect(names.every((n) => n.startsWith('check-points/'))).toBe(true);
    for (const part of ['.git/', 'node_modules', '.svc/', '.expo/', 'metro.config.js'])
      expect(
        names.filter((n) => n.includes(part)),
        part,
      ).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(['check-points/package.json', 'check-points/package-lock.json']));
    for (const [name, bytes] of Object.entries(files))
      expect(Buffer.from(bytes).toString('latin1'), name).not.toMatch(/mobile-builder-mcp|SVC_/);
    expect(settingsOf(files, 'check-points').subtitle).toBe('Second version');
    const appJson = JSON.parse(Buffer.from(files['check-points/app.json']!).toString('utf8'));
    expect(appJson.expo.experiments?.baseUrl).toBeUndefined();

    // Unzipped, it builds with `expo export` as it is (node_modules: the toolchain, offline).
    const unzipped = tempDir('mbm-export-');
    for (const [name, bytes] of Object.entries(files)) {
      mkdirSync(join(unzipped, name, '..'), { recursive: true });
      writeFileSync(join(unzipped, name), bytes);
    }
    const app = join(unzipped, 'check-points');
    const toolchainModules = join(TOOLCHAINS_CACHE, 'expo-sdk-58', 'node_modules');
    symlinkSync(toolchainModules, join(app, 'node_modules'), 'dir');
    const exported = await runCommand(
      process.execPath,
      [join(toolchainModules, 'expo/bin/cli'), 'export', '--platform', 'web', '--output-dir', 'dist'],
      { cwd: app, env: { ...process.env, CI: '1', EXPO_NO_TELEMETRY: '1', EXPO_OFFLINE: '1' }, timeoutMs: 480_000 },
    );
    expect(exported.status, exported.stderr).toBe(0);
    expect(statSync(join(app, 'dist', 'index.html')).isFile()).toBe(true);
    const bundles = walk(join(app, 'dist')).filter((f) => f.endsWith('.js'));
    expect(bundles.some((f) => readFileSync(f, 'utf8').includes('Second version'))).toBe(true);

    // Restore the first build: a new build with the first one's files; the second stays restorable.
    const restored = await run(project.id, firstId, 'restore');
    expect(restored.lastWorkflow).toMatchObject({
      kind: 'restore',
      title: `Restore the checkpoint of workflow ${firstId}`,
    });
    expect(restored.checkpoints.map((c: any) => c.workflowId)).toEqual([restored.lastWorkflow.id, secondId, firstId]);
    const again = await zipAt(restored.lastWorkflow.export);
    expect(settingsOf(again, 'check-points').subtitle).toBe('First version');
    const preview = restored.lastWorkflow.previewUrls.find((p: any) => p.kind === 'preview');
    const html = await rawHttp(preview.url);
    const script = /src="([^"]+\.js)"/.exec(html.text)![1]!;
    const bundle = await rawHttp(new URL(script, preview.url).href);
    expect(bundle.text).toContain('First version');
    expect(bundle.text).not.toContain('Second version');
    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    const said = messages.filter((m: any) => m.workflowId === restored.lastWorkflow.id).map((m: any) => m.content);
    expect(
      said.some((c: string) => c.startsWith(`Restored Check Points to the checkpoint of workflow ${firstId}`)),
    ).toBe(true);

    // Names that are no checkpoint of this project: -32602 naming those that exist.
    for (const name of ['#7', '7', other.id, 'latest']) {
      const { error } = (
        await callTool(server.mcpUrl, token, 'svc_send_message', {
          projectId: project.id,
          message: name,
          kind: 'restore',
        })
      ).json;
      expect(error.code, name).toBe(-32602);
      expect(error.message).toMatch(/^Invalid parameter: message names no checkpoint/);
      expect(error.data.checkpoints).toEqual([restored.lastWorkflow.id, secondId, firstId]);
    }
    // Another project's checkpoint is not this one's.
    const elsewhere = (
      await callTool(server.mcpUrl, token, 'svc_send_message', {
        projectId: other.id,
        message: firstId,
        kind: 'restore',
      })
    ).json;
    expect(elsewhere.error).toMatchObject({ code: -32602, data: { checkpoints: [], deployNumbers: [] } });
    // Another user's project: its checkpoints are not this one's.
    const bobs = await createProject(server.mcpUrl, server.token('bob'), { name: 'Bob' });
    const refused = (
      await callTool(server.mcpUrl, token, 'svc_send_message', {
        projectId: bobs.id,
        message: firstId,
        kind: 'restore',
      })
    ).json;
    expect(refused.error.code).toBe(-32003);
    expect(existsSync(app)).toBe(true);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}
