/**
 * The `host` agent on the real toolchain (docs/builders.md "Code questions"): a scripted host (a test, no
 * model) drives the loop through real SDK clients over HTTP and over stdio: it reads the code
 * question, answers with files that add a Settings screen, and the preview renders the screen in
 * headless Chromium. Bad answers are -32602 with their reasons and write nothing; a type error
 * brings a repair question with the diagnostic; three bad rounds fail with `agent_failed` and the
 * next build works; a restart while the question is pending, and a cancel while waiting.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { cliToken } from '../bin-helpers.js';
import { BIN, GENEROUS_PLANS, ROOT, httpClient, rpcErrorOf, tempDir, waitFor, type TestServer } from '../helpers.js';
import { ensureToolchain, launchChromium, pageText, startExpoServer, TOOLCHAINS_CACHE } from './expo-helpers.js';

let server: TestServer;
let token: string;
let browser: Browser | null;
let client: Client;

beforeAll(async () => {
  await ensureToolchain();
  server = await startExpoServer({ agent: 'host' }, { cancelTimeoutMs: 20_000 });
  token = server.token('alice');
  client = await httpClient(server.mcpUrl, token);
  browser = await launchChromium();
});

afterAll(async () => {
  await client?.close();
  await browser?.close();
  await server?.close();
});

type Call = (name: string, args: Record<string, unknown>) => Promise<any>;

/** A tool call through an SDK client; its structured result, or throws the JSON-RPC error. */
function caller(c: Client): Call {
  return async (name, args) => {
    const result = await c.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  };
}

async function waitPending(call: Call, projectId: string, notId?: string): Promise<any> {
  return waitFor(
    async () => {
      const s = await call('svc_get_session', { projectId });
      return s.pendingQuestion && s.pendingQuestion.questionId !== notId ? s.pendingQuestion : null;
    },
    300_000,
    'a code question',
  );
}

async function waitDone(call: Call, projectId: string): Promise<any> {
  return waitFor(
    async () => {
      const s = await call('svc_get_session', { projectId });
      return s.hasActiveWorkflows ? null : s;
    },
    540_000,
    'the workflow to finish',
  );
}

/** The content of `path` as the prompt shows it. */
function fileInPrompt(prompt: string, path: string): string {
  const m = new RegExp(
    `----- BEGIN ${path.replace('.', '\\.')} -----\\n([\\s\\S]*?)----- END ${path.replace('.', '\\.')} -----`,
  ).exec(prompt);
  if (!m) throw new Error(`${path} is not in the prompt`);
  return m[1]!;
}

const SETTINGS_SCREEN = `import { Text, View } from 'react-native';

/** The Settings screen the host's model wrote. */
export function SettingsScreen({ title }: { title: string }) {
  return (
    <View>
      <Text>{title}: Reminders, Theme, About</Text>
    </View>
  );
}
`;

/** What a model would answer: the Settings screen, rendered from App.tsx. */
function settingsAnswer(prompt: string, title = 'Settings screen'): string {
  const app = fileInPrompt(prompt, 'App.tsx')
    .replace(
      "import settings from './src/app-settings.json';",
      "import settings from './src/app-settings.json';\nimport { SettingsScreen } from './src/screens/SettingsScreen';",
    )
    .replace(
      '<ScrollView contentContainerStyle={styles.body}>',
      `<ScrollView contentContainerStyle={styles.body}><SettingsScreen title=${JSON.stringify(title)} />`,
    );
  return JSON.stringify({
    summary: 'Adds a Settings screen (reminders, theme, about) at the top of the app.',
    files: [
      { path: 'src/screens/SettingsScreen.tsx', content: SETTINGS_SCREEN },
      { path: 'App.tsx', content: app },
    ],
  });
}

const BROKEN = JSON.stringify({
  summary: 'Counts things',
  files: [{ path: 'src/count.ts', content: 'export const count: number = "not a number";\n' }],
});

async function send(call: Call, projectId: string, message: string, questionId?: string) {
  return call('svc_send_message', { projectId, message, ...(questionId ? { questionId } : { kind: 'build' }) });
}

async function refusedWith(
  call: Call,
  projectId: string,
  questionId: string,
  message: string,
): Promise<{ code: number; message: string; data?: any }> {
  try {
    await send(call, projectId, message, questionId);
  } catch (error) {
    return rpcErrorOf(error);
  }
  throw new Error('expected -32602');
}

/** Opens the web preview in Chromium and checks its text; without a browser the test is skipped visibly here. */
async function expectPreview(ctx: TestContext, session: any, text: string, name: string): Promise<void> {
  if (!browser) return ctx.skip();
  const url = session.previewUrls.find((p: { platform: string }) => p.platform === 'web').url;
  expect(await pageText(browser, url, text)).toContain(name);
}

describe('expo builder: the host agent over HTTP', () => {
  it('a code question, refused bad answers, then a Settings screen that renders', async (ctx) => {
    const call = caller(client);
    const project = await call('svc_create_project', { name: 'Habit Tracker' });
    await send(call, project.id, 'Build me a habit tracker with a settings screen');
    const question = await waitPending(call, project.id);
    expect(question.kind).toBe('code');
    expect(question.maxLength).toBe(240_000);
    expect(question.format).toMatchObject({ type: 'object', required: ['summary', 'files'] });
    expect(question.prompt).toContain('"Build me a habit tracker with a settings screen"');
    expect(question.prompt).toContain('----- BEGIN App.tsx -----');
    expect(question.prompt).toMatch(/Packages you may import\n.*react-native/);
    // The code must build with every served SDK: the prompt names them with their React Native.
    expect(question.prompt).toMatch(
      /Expo SDK 58 \(React Native 0\.88\.\d+\) and Expo SDK 54 \(React Native 0\.81\.\d+\)/,
    );
    expect(question.prompt).toContain('type-checks them with tsc --noEmit against Expo SDK 58');
    const workspace = join(server.dataDir, 'workspaces', project.id);
    const head = () => execFileSync('git', ['rev-parse', 'HEAD'], { cwd: workspace, encoding: 'utf8' });
    const before = head();

    // Each bad answer: -32602 with its reason in data.issues; nothing written; still pending.
    mkdirSync(join(workspace, 'src'), { recursive: true });
    symlinkSync('/tmp', join(workspace, 'src', 'planted'));
    const one = (path: string, content = 'export const x = 1;\n') =>
      JSON.stringify({ summary: 's', files: [{ path, content }] });
    const bad: Array<[string, RegExp]> = [
      [one('package.json', '{}'), /configuration file/],
      [one('README.md'), /outside the editable files/],
      [one('../outside.ts'), /paths stay inside the app/],
      [one('src/planted/evil.ts'), /symbolic link/],
      [one('src/big.ts', `export const s = "${'a'.repeat(150_000)}";\n`), /at most 100000/],
      [JSON.stringify({ files: 'App.tsx' }), /message\.(summary|files)/],
      [
        one('src/net.ts', "import axios from 'axios';\nexport default axios;\n"),
        /axios.*which is not one of the app's packages/,
      ],
      // A module SDK 58's expo ships and SDK 54's does not: the deploy's SDK 54 export would fail.
      [
        one('src/cache.ts', "import 'expo/local-build-cache-provider';\nexport const x = 1;\n"),
        /expo\/local-build-cache-provider.*which Expo SDK 54 does not have/,
      ],
    ];
    for (const [answer, reason] of bad) {
      const error = await refusedWith(call, project.id, question.questionId, answer);
      expect(error.code, answer.slice(0, 60)).toBe(-32602);
      expect(JSON.stringify(error.data?.issues), answer.slice(0, 60)).toMatch(reason);
    }
    expect(existsSync(join('/tmp', 'evil.ts'))).toBe(false);
    expect(existsSync(join(workspace, 'src', 'big.ts'))).toBe(false);
    execFileSync('rm', [join(workspace, 'src', 'planted')]);
    const still = await call('svc_get_session', { projectId: project.id });
    expect(still.pendingQuestion.questionId).toBe(question.questionId);
    expect(still.activeWorkflow.status).toBe('waiting_for_input');

    await send(call, project.id, settingsAnswer(question.prompt), question.questionId);
    const done = await waitDone(call, project.id);
    expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
    expect(head()).not.toBe(before);
    expect(execFileSync('git', ['log', '-1', '--format=%B'], { cwd: workspace, encoding: 'utf8' })).toContain(
      'Adds a Settings screen',
    );
    const { messages } = await call('svc_get_messages', { projectId: project.id, limit: 200 });
    const answer = messages.find((m: any) => m.type === 'answer');
    expect(answer.content).toContain('src/screens/SettingsScreen.tsx');
    expect(answer.content).not.toContain('Reminders, Theme');
    expect(messages.some((m: any) => m.type === 'question' && m.content.length < 2000)).toBe(true);
    expect(messages.some((m: any) => /Type check passed/.test(m.content))).toBe(true);
    await expectPreview(ctx, done, 'Settings screen: Reminders, Theme, About', 'Habit Tracker');
  });

  it('a type error brings a repair question with the diagnostic; a correct repair completes', async (ctx) => {
    const call = caller(client);
    const project = await call('svc_create_project', { name: 'Repair App' });
    await send(call, project.id, 'add a counter');
    const first = await waitPending(call, project.id);
    await send(call, project.id, BROKEN, first.questionId);
    const repair = await waitPending(call, project.id, first.questionId);
    expect(repair.kind).toBe('code');
    expect(repair.prompt).toMatch(/src\/count\.ts\(1,14\): error TS2322/);
    await send(call, project.id, settingsAnswer(first.prompt, 'Repaired settings'), repair.questionId);
    const done = await waitDone(call, project.id);
    expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
    await expectPreview(ctx, done, 'Repaired settings: Reminders', 'Repair App');
  });

  it('three bad rounds fail with agent_failed, the workspace is back at its last good commit, and the next build works', async () => {
    const call = caller(client);
    const project = await call('svc_create_project', { name: 'Stubborn App' });
    await send(call, project.id, 'add a counter');
    let last: string | undefined;
    for (let round = 0; round < 3; round++) {
      const q = await waitPending(call, project.id, last);
      await send(call, project.id, BROKEN, q.questionId);
      last = q.questionId;
    }
    const failed = await waitDone(call, project.id);
    expect(failed.lastWorkflow.status).toBe('failed');
    expect(failed.lastWorkflow.error.code).toBe('agent_failed');
    expect(failed.lastWorkflow.error.message).toContain('TS2322');
    const workspace = join(server.dataDir, 'workspaces', project.id);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');
    expect(existsSync(join(workspace, 'src', 'count.ts'))).toBe(false);

    await send(call, project.id, 'a plain build, make it teal');
    const q = await waitPending(call, project.id);
    await send(call, project.id, 'skip', q.questionId);
    const next = await waitDone(call, project.id);
    expect(next.lastWorkflow.status, JSON.stringify(next.lastWorkflow.error)).toBe('completed');
  });

  it('the host follows the build with waits and sees the real app; a later skip claims no edit the rewritten app does not show', async (ctx) => {
    const call = caller(client);
    const project = await call('svc_create_project', { name: 'Own App' });
    await send(call, project.id, 'Build a habit app');
    // One wait per change: the first returns when the code question is asked.
    const asked = (
      await client.callTool({ name: 'svc_get_session', arguments: { projectId: project.id, waitSeconds: 60 } })
    ).structuredContent as any;
    const question = asked.pendingQuestion ?? (await waitPending(call, project.id));
    const ownApp = `import { Text, View } from 'react-native';\n\nexport default function App() {\n  return (\n    <View style={{ flex: 1, backgroundColor: '#c81e1e', padding: 40 }}>\n      <Text style={{ color: '#ffffff', fontSize: 28 }}>My own habits</Text>\n    </View>\n  );\n}\n`;
    await send(
      call,
      project.id,
      JSON.stringify({ summary: 'A red habits screen of my own', files: [{ path: 'App.tsx', content: ownApp }] }),
      question.questionId,
    );
    const built = await waitDone(call, project.id);
    expect(built.lastWorkflow.status, JSON.stringify(built.lastWorkflow.error)).toBe('completed');

    // Look: the real Expo web export, rendered by the server's own Chromium on a phone screen.
    const look = await client.callTool({
      name: 'svc_get_session',
      arguments: { projectId: project.id, screenshot: true },
    });
    const shot = (look.structuredContent as any).screenshot;
    if (existsSync('/usr/bin/chromium')) {
      expect(shot.status, JSON.stringify(shot)).toBe('taken');
      const { PNG } = await import('pngjs');
      const png = PNG.sync.read(Buffer.from((look.content as any[]).find((c) => c.type === 'image').data, 'base64'));
      expect(png.width).toBe(390);
      const px = png.data.subarray(4 * (400 * png.width + 200), 4 * (400 * png.width + 200) + 3);
      expect([...px]).toEqual([0xc8, 0x1e, 0x1e]);
    }

    await send(call, project.id, 'Make it teal, with the subtitle "Daily streaks"');
    const second = await waitPending(call, project.id);
    await send(call, project.id, 'skip', second.questionId);
    const done = await waitDone(call, project.id);
    expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
    const { messages } = await call('svc_get_messages', { projectId: project.id, limit: 500 });
    const text = messages
      .filter((m: any) => m.workflowId === done.lastWorkflow.id)
      .map((m: any) => m.content)
      .join('\n');
    expect(text).not.toContain('Edit made');
    expect(text).toContain('Not shown in the app');
    expect(text).not.toContain('--agent host');
    await expectPreview(ctx, done, 'My own habits', 'My own habits');
  });

  it('cancel while waiting for the answer: cancelled, no staging folder left', async () => {
    const call = caller(client);
    const project = await call('svc_create_project', { name: 'Cancel App' });
    await send(call, project.id, 'add a counter');
    await waitPending(call, project.id);
    const cancelled = await call('svc_cancel_workflow', { projectId: project.id });
    expect(cancelled.status).toBe('cancelled');
    const workspace = join(server.dataDir, 'workspaces', project.id);
    expect(existsSync(join(workspace, '.svc', 'staging'))).toBe(false);

    // Cancelled while the answer is staged and type-checked: the staging copy goes too, and the
    // workspace stays at its last good commit.
    await send(call, project.id, 'add a counter');
    const question = await waitPending(call, project.id);
    await send(call, project.id, settingsAnswer(question.prompt), question.questionId);
    await waitFor(
      async () => {
        const { messages } = await call('svc_get_messages', { projectId: project.id, limit: 500 });
        return messages.some((m: any) => m.content.startsWith('Staging 2 files'));
      },
      120_000,
      'the answer to be staged',
    );
    const stopped = await call('svc_cancel_workflow', { projectId: project.id });
    expect(stopped.status).toBe('cancelled');
    expect(existsSync(join(workspace, '.svc', 'staging'))).toBe(false);
    expect(existsSync(join(workspace, 'src', 'screens'))).toBe(false);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');
  });
});

describe('expo builder: the host agent across a restart and over stdio', () => {
  it('a restart while the code question is pending: answering after the restart completes the build', async (ctx) => {
    const dataDir = tempDir('mbm-host-restart-');
    const first = await startExpoServer({ agent: 'host' }, { dataDir });
    const alice = first.token('alice');
    const c1 = await httpClient(first.mcpUrl, alice);
    const project = await caller(c1)('svc_create_project', { name: 'Restart App' });
    await send(caller(c1), project.id, 'add a settings screen');
    const question = await waitPending(caller(c1), project.id);
    await c1.close();
    await first.http.close();
    await first.app.close();

    const second = await startExpoServer({ agent: 'host' }, { dataDir });
    try {
      const c2 = await httpClient(second.mcpUrl, alice);
      const call = caller(c2);
      const pending = await waitPending(call, project.id);
      expect(pending.questionId).toBe(question.questionId);
      await send(call, project.id, settingsAnswer(question.prompt, 'After restart'), question.questionId);
      const done = await waitDone(call, project.id);
      expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
      await expectPreview(ctx, done, 'After restart: Reminders', 'Restart App');
      await c2.close();
    } finally {
      await second.close();
    }
  });

  it('over stdio: the spawned bin with --agent host takes a code answer and builds it', async (ctx) => {
    const dataDir = tempDir('mbm-host-stdio-');
    symlinkSync(TOOLCHAINS_CACHE, join(dataDir, 'toolchains'));
    mkdirSync(join(dataDir, 'cache'), { recursive: true });
    symlinkSync(join(ROOT, '.cache', 'expo-metro'), join(dataDir, 'cache', 'metro'));
    const plans = join(dataDir, 'plans.json');
    writeFileSync(plans, JSON.stringify(GENEROUS_PLANS));
    const alice = cliToken(dataDir, 'alice');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        BIN,
        'serve',
        '--data-dir',
        dataDir,
        '--port',
        '0',
        '--builder',
        'expo',
        '--agent',
        'host',
        '--plans',
        plans,
      ],
      env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: alice, SVC_LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    const stdio = new Client({ name: 'stdio-host', version: '1.0.0' });
    await stdio.connect(transport);
    try {
      const call = caller(stdio);
      const project = await call('svc_create_project', { name: 'Stdio App' });
      await send(call, project.id, 'add a settings screen');
      const question = await waitPending(call, project.id);
      expect(question.kind).toBe('code');
      const error = await refusedWith(
        call,
        project.id,
        question.questionId,
        JSON.stringify({ summary: 's', files: [{ path: 'app.json', content: '{}' }] }),
      );
      expect(error.code).toBe(-32602);
      await send(call, project.id, settingsAnswer(question.prompt, 'Over stdio'), question.questionId);
      const done = await waitDone(call, project.id);
      expect(done.lastWorkflow.status, JSON.stringify(done.lastWorkflow.error)).toBe('completed');
      await expectPreview(ctx, done, 'Over stdio: Reminders', 'Stdio App');
    } finally {
      await stdio.close();
    }
  });
});
