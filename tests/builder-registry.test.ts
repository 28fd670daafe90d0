/**
 * The builder registry (docs/architecture.md, "Builders"): builders by name, the start-up checks,
 * answer checks dispatched by question kind, the routes every builder adds to the listeners
 * whichever runs, and `svc_send_message`'s description taking its rules from the builders.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUILDER_MESSAGE_RULES,
  BUILDER_NAMES,
  builderRunsProcesses,
  checkBuilderSettings,
  createBuilder,
  questionKind,
} from '../src/builders/builder-registry.js';
import { expoBuilderModule } from '../src/builders/expo/expo-module.js';
import { httpClient, rawHttp, startTestServer, tempDir, type TestServer } from './helpers.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(): string {
  const dir = tempDir('mbm-registry-');
  dirs.push(dir);
  return dir;
}

async function sendMessageDescription(server: TestServer): Promise<string> {
  const client = await httpClient(server.mcpUrl, server.token('alice'));
  try {
    const { tools } = await client.listTools();
    return tools.find((t) => t.name === 'svc_send_message')!.description!;
  } finally {
    await client.close();
  }
}

describe('the builder registry', () => {
  it('names every builder, creates the one asked for, and refuses an unknown name', () => {
    expect(BUILDER_NAMES).toEqual(['scripted', 'command', 'expo']);
    const dataDir = scratchDir();
    expect(createBuilder('scripted', { dataDir }).name).toBe('scripted');
    expect(createBuilder('expo', { dataDir, expo: { agent: 'none' } }).name).toBe('expo');
    expect(() => createBuilder('command', { dataDir })).toThrow(/needs --builder-config FILE/);
    expect(() => createBuilder('gradle', { dataDir })).toThrow(
      'Unknown builder "gradle": use one of scripted, command, expo',
    );
  });

  it('says which builders start processes (serve --http needs a sandbox for them)', () => {
    expect(BUILDER_NAMES.map((name) => [name, builderRunsProcesses(name)])).toEqual([
      ['scripted', false],
      ['command', true],
      ['expo', true],
    ]);
  });

  it("runs the builders' start-up checks: an unreadable updates signing key fails at start", () => {
    const dataDir = scratchDir();
    expect(() => checkBuilderSettings({ dataDir })).not.toThrow();
    expect(() => checkBuilderSettings({ dataDir, updatesSigningKeyFile: join(dataDir, 'missing.pem') })).toThrow(
      /Cannot read the updates signing key .*missing\.pem/,
    );
  });

  it("dispatches answer checks by question kind: code questions are the expo builder's, text ones nobody's", () => {
    expect(questionKind('code')).toBe(expoBuilderModule.questionKinds?.code);
    expect(questionKind('text')).toBeUndefined();
    expect(questionKind('code')!.checkAnswer(null, 'skip', '/')).toEqual({
      ok: false,
      issues: [
        { parameter: 'message', problem: 'cannot be checked: the question has no rules (ask again with a new build)' },
      ],
    });
  });
});

describe('what builders add to the server, whichever runs', () => {
  it("svc_send_message's description carries the builders' rules, the same under every --builder", async () => {
    const scripted = await startTestServer({ builder: 'scripted' });
    servers.push(scripted);
    const expo = await startTestServer({ builder: 'expo', expo: { agent: 'none', installToolchain: false } });
    servers.push(expo);
    const description = await sendMessageDescription(scripted);
    expect(expoBuilderModule.messageRules?.length).toBeGreaterThan(0);
    expect(BUILDER_MESSAGE_RULES).toEqual(expoBuilderModule.messageRules);
    const lines = description.split('\n');
    // The rules come right after the line on answering a pendingQuestion, whole lines as the builder wrote them.
    const at = lines.findIndex((line) => line.startsWith("- To answer the session's pendingQuestion"));
    expect(lines.slice(at + 1, at + 1 + BUILDER_MESSAGE_RULES.length)).toEqual(BUILDER_MESSAGE_RULES);
    expect(await sendMessageDescription(expo)).toBe(description);
  });

  it('serves the expo update routes on a server running another builder (deployments outlive the builder)', async () => {
    const server = await startTestServer({ builder: 'scripted' });
    servers.push(server);
    const pinned = await rawHttp(`${server.http.url}/updates/d/${randomUUID()}`, {
      headers: { 'expo-platform': 'ios', 'expo-runtime-version': 'exposdk:58.0.0' },
    });
    expect(pinned.status).toBe(404);
    expect(pinned.headers['expo-protocol-version']).toBe('1');
    expect(JSON.parse(pinned.text)).toEqual({ error: 'No ios update here' });
    const badPlatform = await rawHttp(`${server.http.url}/updates/latest/abc`, { headers: { 'expo-platform': 'web' } });
    expect(badPlatform.status).toBe(400);
  });
});
