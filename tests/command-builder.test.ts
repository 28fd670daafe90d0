/**
 * The `command` builder with real shell processes (docs/builders.md#builders):
 * the line protocol, output streaming, exit status, and that cancel leaves no process behind.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/app.js';
import { SANDBOX_TURNED_OFF } from '../src/builders/process-sandbox.js';
import {
  callTool,
  createProject,
  rawHttp,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  waitQuestion,
  type TestServer,
  processAlive as alive,
  processesWith,
} from './helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function withCommands(config: Record<string, unknown>, dir = tempDir('mbm-cmd-'), app: Partial<AppConfig> = {}) {
  const file = join(dir, 'builder.json');
  writeFileSync(file, JSON.stringify(config));
  server = await startTestServer({ builder: 'command', builderConfigFile: file, cancelTimeoutMs: 10_000, ...app });
  const token = server.token('alice');
  const project = await createProject(server.mcpUrl, token, { name: 'Cmd app', description: 'runs shell' });
  return { token, project, dir };
}

describe('command builder', () => {
  it('runs the command in the workspace with the instruction in the environment and follows the line protocol', async () => {
    const script = [
      'echo "::step 1/3 Preparing"',
      'echo "instruction=$SVC_INSTRUCTION project=$SVC_PROJECT_NAME token=${SVC_API_TOKEN:-none}"',
      'echo "warning on stderr" >&2',
      'mkdir -p out && echo "<h1>$SVC_PROJECT_NAME</h1>" > out/index.html',
      'echo "::step 2/3 Publishing"',
      'echo "::preview web out"',
      'echo "::preview-url ios https://expo.example/preview/123"',
      'echo \'::ask app_id {"prompt":"Which id?","options":["com.a.b","com.c.d"]}\'',
      'read answer',
      'echo "::step 3/3 Done"',
      'echo "::result built for $answer"',
    ].join('\n');
    process.env.SVC_API_TOKEN = 'svc_should_not_leak';
    const { token, project } = await withCommands({ build: { command: script } });
    delete process.env.SVC_API_TOKEN;
    const sent = await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'make it blue',
    });
    const waiting = await waitQuestion(server!.mcpUrl, token, project.id);
    expect(waiting.pendingQuestion).toMatchObject({ prompt: 'Which id?', options: ['com.a.b', 'com.c.d'] });
    const bad = await callTool(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'com.x.y',
    });
    expect(bad.json.error.message).toBe('Invalid parameter: message must be one of "com.a.b", "com.c.d"');
    await toolResult(server!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'com.c.d' });
    const done = await waitIdle(server!.mcpUrl, token, project.id);
    expect(done.lastWorkflow).toMatchObject({
      id: sent.workflowId,
      status: 'completed',
      step: { index: 3, total: 3, name: 'Done' },
    });
    const web = done.previewUrls.find((u: any) => u.platform === 'web');
    expect((await rawHttp(web.url)).text).toContain('<h1>Cmd app</h1>');
    expect(done.previewUrls.find((u: any) => u.platform === 'ios').url).toBe('https://expo.example/preview/123');
    const { messages } = await toolResult(server!.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    const text = messages.map((m: any) => m.content).join('\n');
    expect(text).toContain('instruction=make it blue project=Cmd app token=none');
    expect(text).toContain('warning on stderr');
    expect(text).not.toContain('::step');
    expect(messages.find((m: any) => m.type === 'result').content).toBe('built for com.c.d');
  });

  it('a non-zero exit fails the workflow with command_failed; an unconfigured kind fails with not_configured', async () => {
    const { token, project } = await withCommands({ build: { command: 'echo compiling; exit 3' } });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'build' });
    const failed = await waitIdle(server!.mcpUrl, token, project.id);
    expect(failed.lastWorkflow).toMatchObject({
      status: 'failed',
      error: { code: 'command_failed', message: 'The build command exited with code 3.' },
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'deploy',
      kind: 'deploy',
    });
    const notConfigured = await waitIdle(server!.mcpUrl, token, project.id);
    expect(notConfigured.lastWorkflow.error.code).toBe('not_configured');
  });

  it('cancel kills the whole process group (SIGTERM, then SIGKILL for what ignores it) and leaves no process behind', async () => {
    // Unsandboxed, so that the command can write its process ids (host pids) where the test reads them.
    const dir = tempDir('mbm-cmd-');
    const { token, project } = await withCommands(
      {
        killGraceMs: 300,
        build: {
          command: [
            `sh -c 'trap "" TERM; echo $$ > ${dir}/stubborn.pid; while true; do sleep 0.05; done' &`,
            `sleep 1000 & echo $! > ${dir}/sleeper.pid`,
            `echo $$ > ${dir}/shell.pid`,
            'echo started',
            'wait',
          ].join('\n'),
        },
      },
      dir,
      { buildSandbox: SANDBOX_TURNED_OFF },
    );
    const sent = await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
    });
    await waitFor(
      () =>
        ['stubborn', 'sleeper', 'shell'].every(
          (n) => existsSync(join(dir, `${n}.pid`)) && readFileSync(join(dir, `${n}.pid`), 'utf8').trim(),
        ),
      10_000,
      'pid files',
    );
    const pids = ['stubborn', 'sleeper', 'shell'].map((n) =>
      Number(readFileSync(join(dir, `${n}.pid`), 'utf8').trim()),
    );
    expect(pids.every(alive)).toBe(true);
    const result = await toolResult(server!.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    expect(result).toEqual({ workflowId: sent.workflowId, status: 'cancelled', cancelled: true });
    await waitFor(() => pids.every((p) => !alive(p)) || null, 5_000, 'every process to be gone');
    expect(pids.filter(alive)).toEqual([]);
  });

  it('cancel in the sandbox leaves no process behind either (a stubborn child and a detached one included)', async () => {
    const marker = `mbm-marker-${process.pid}-${Date.now()}`;
    const { token, project } = await withCommands({
      killGraceMs: 300,
      build: {
        command: [
          `sh -c 'trap "" TERM; while true; do sleep 0.05; done # ${marker}' &`,
          `setsid sh -c 'sleep 1000 # ${marker}' &`,
          'echo started',
          'wait',
        ].join('\n'),
      },
    });
    const marked = () => processesWith(marker);
    await toolResult(server!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'build' });
    await waitFor(() => marked().length >= 2 || null, 10_000, 'the marked processes');
    await toolResult(server!.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    await waitFor(() => marked().length === 0 || null, 10_000, 'every marked process to be gone');
    expect(marked()).toEqual([]);
  });

  it('a timeout stops the command and fails with code timeout', async () => {
    const { token, project } = await withCommands({
      killGraceMs: 100,
      build: { command: 'sleep 30', timeoutSeconds: 1 },
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'build' });
    const done = await waitIdle(server!.mcpUrl, token, project.id);
    expect(done.lastWorkflow.error.code).toBe('timeout');
  });
});
