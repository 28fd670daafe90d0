/**
 * What a host's model does, played over both transports against the real, spawned bin (docs/hosts.md
 * "A host's loop"): create, build, wait, look, answer, deploy, with one `svc_get_session` wait per
 * step (each returns because the workflow changed, never because its time was up), progress
 * messages naming the steps, and a picture of the app at the end.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, rmSync } from 'node:fs';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { BIN, httpClient, tempDir } from './helpers.js';

const STEP_MS = '300';
const haveChromium = existsSync('/usr/bin/chromium');

/** The host's model: follows every workflow with waits until nothing is active, answering what is asked. */
async function play(client: Client) {
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })).structuredContent as any;
  const waits: Array<{ reason: string; progress: string[] }> = [];
  const follow = async (projectId: string, answer: (question: any) => string) => {
    for (;;) {
      const progress: string[] = [];
      const result = await client.callTool(
        { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 } },
        CallToolResultSchema,
        {
          onprogress: (p) => progress.push(p.message ?? ''),
        },
      );
      const s = result.structuredContent as any;
      waits.push({ reason: s.wait.reason, progress });
      if (s.pendingQuestion)
        await call('svc_send_message', {
          projectId,
          message: answer(s.pendingQuestion),
          questionId: s.pendingQuestion.questionId,
        });
      if (!s.hasActiveWorkflows) return s;
    }
  };

  const project = await call('svc_create_project', { name: 'Host loop', description: 'Played by a host' });
  const build = await call('svc_send_message', {
    projectId: project.id,
    message: 'Build a habit tracker',
    kind: 'build',
  });
  expect(build.kind).toBe('build');
  const built = await follow(project.id, () => 'skip');
  expect(built.lastWorkflow).toMatchObject({ kind: 'build', status: 'completed' });

  const look = await client.callTool({
    name: 'svc_get_session',
    arguments: { projectId: project.id, screenshot: true },
  });
  const content = look.content as any[];
  expect(content.find((c) => c.type === 'resource_link')?.uri).toBe(built.previewUrls[0].url);

  await call('svc_send_message', { projectId: project.id, message: 'Deploy it', kind: 'deploy' });
  const questions: string[] = [];
  const deployed = await follow(project.id, (q) => {
    questions.push(q.prompt);
    return 'com.example.habits';
  });
  expect(questions).toHaveLength(1);
  expect(deployed.lastWorkflow).toMatchObject({ kind: 'deploy', status: 'completed' });
  expect(deployed.previewUrls.some((p: any) => p.kind === 'deployment')).toBe(true);
  return {
    waits,
    image: content.find((c) => c.type === 'image'),
    screenshot: (look.structuredContent as any).screenshot,
  };
}

function expectOneWaitPerStep(result: Awaited<ReturnType<typeof play>>) {
  // Every wait ended on a change of the workflow (or found it already finished, or its question
  // already asked, when that happened between two calls): none ran out its time, none was a blind poll.
  expect(
    result.waits
      .map((w) => w.reason)
      .filter((r) => r !== 'changed' && r !== 'nothing_active' && r !== 'question_pending'),
  ).toEqual([]);
  // A build has 4 steps and a deploy 3 plus its question: a handful of waits, not dozens of polls.
  expect(result.waits.length).toBeLessThanOrEqual(14);
  // Each wait's first notification names where the workflow stands, step by name. (The one sent
  // with the change that ends a wait may reach the SDK's client together with the answer, which
  // then drops it: the answer itself carries that change.)
  const messages = result.waits.flatMap((w) => w.progress).join('\n');
  expect(messages).toMatch(
    /build running: step \d\/4 (Reading the instructions|Generating the app screens|Bundling the web preview|Publishing the preview)/,
  );
  expect(messages).toMatch(/deploy (running: |waiting for input at )step \d\/3 /);
  if (haveChromium) {
    expect(result.screenshot.status).toBe('taken');
    const png = PNG.sync.read(Buffer.from(result.image.data, 'base64'));
    expect(png.width).toBe(390);
  } else {
    expect(result.screenshot.status).toBe('unavailable');
  }
}

describe("a host's loop against the spawned bin", () => {
  let dataDir: string;
  let token: string;
  let http: SpawnedServer | undefined;
  beforeAll(() => {
    dataDir = tempDir();
    token = cliToken(dataDir, 'alice');
  });
  afterAll(async () => {
    await http?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('over stdio', async () => {
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
        'scripted',
        '--scripted-step-ms',
        STEP_MS,
      ],
      env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: token },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'host-loop', version: '1.0.0' });
    await client.connect(transport);
    try {
      expectOneWaitPerStep(await play(client));
    } finally {
      await client.close();
    }
  });

  it('over streamable HTTP', async () => {
    http = await spawnHttpServer(dataDir, ['--scripted-step-ms', STEP_MS]);
    const client = await httpClient(http.mcpUrl, token);
    try {
      expectOneWaitPerStep(await play(client));
    } finally {
      await client.close();
    }
  });
});
