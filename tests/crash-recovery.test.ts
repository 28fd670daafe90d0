/**
 * Crash recovery (docs/contract.md#tools) with the real bin killed by SIGKILL mid-workflow and
 * restarted on the same data dir: the running workflow is reported interrupted, the queued one
 * then runs, a question survives and resumes, and no message is lost.
 */
import { describe, expect, it } from 'vitest';
import { rawHttp, tempDir, toolResult, waitFor } from './helpers.js';
import { cliToken, spawnHttpServer } from './bin-helpers.js';

describe('crash recovery', () => {
  it('SIGKILL mid-build: the running workflow becomes failed/interrupted, the queued one runs after restart, no message lost', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    const first = await spawnHttpServer(dataDir, ['--scripted-step-ms', '3000']);
    const project = await toolResult(first.mcpUrl, token, 'svc_create_project', { name: 'Crashy' });
    const running = await toolResult(first.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build one',
    });
    const queued = await toolResult(first.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build two',
    });
    expect([running.status, queued.status]).toEqual(['running', 'queued']);
    await waitFor(
      async () =>
        (await toolResult(first.mcpUrl, token, 'svc_get_session', { projectId: project.id })).activeWorkflow?.step
          .index >= 1,
      10_000,
      'the first step',
    );
    const before = (await toolResult(first.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 500 }))
      .messages;
    await first.stop('SIGKILL');

    const second = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10']);
    try {
      const done = await waitFor(
        async () => {
          const s = await toolResult(second.mcpUrl, token, 'svc_get_session', { projectId: project.id });
          return s.hasActiveWorkflows ? null : s;
        },
        20_000,
        'the queue to drain after restart',
      );
      expect(done.lastWorkflow).toMatchObject({ id: queued.workflowId, status: 'completed' });
      const after = (await toolResult(second.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 500 }))
        .messages;
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after.map((m: any) => m.seq)).toEqual(after.map((_: unknown, i: number) => i + 1));
      const interrupted = after.find((m: any) => m.workflowId === running.workflowId && m.type === 'error');
      expect(interrupted.content).toMatch(/interrupted/);
      const cancel = await toolResult(second.mcpUrl, token, 'svc_cancel_workflow', {
        projectId: project.id,
        workflowId: running.workflowId,
      });
      expect(cancel).toEqual({ workflowId: running.workflowId, status: 'failed', cancelled: false });
      // The interrupted workflow's error is visible in the store as docs/workflows.md says.
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(`${dataDir}/mobile-builder.db`, { readonly: true });
      expect(db.prepare('select status, error_code from workflows where id = ?').get(running.workflowId)).toEqual({
        status: 'failed',
        error_code: 'interrupted',
      });
      db.close();
    } finally {
      await second.stop();
    }
  });

  it('SIGKILL while waiting for an answer: the question survives, and answering after restart resumes and completes the deploy', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    const first = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10']);
    const project = await toolResult(first.mcpUrl, token, 'svc_create_project', { name: 'Waiter' });
    const deploy = await toolResult(first.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'deploy it',
    });
    const asked = await waitFor(
      async () => (await toolResult(first.mcpUrl, token, 'svc_get_session', { projectId: project.id })).pendingQuestion,
      15_000,
      'the question',
    );
    await first.stop('SIGKILL');

    const second = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10']);
    try {
      const session = await toolResult(second.mcpUrl, token, 'svc_get_session', { projectId: project.id });
      expect(session.activeWorkflow).toMatchObject({ id: deploy.workflowId, status: 'waiting_for_input' });
      expect(session.pendingQuestion.questionId).toBe(asked.questionId);
      await toolResult(second.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'com.example.waiter',
        questionId: asked.questionId,
      });
      const done = await waitFor(
        async () => {
          const s = await toolResult(second.mcpUrl, token, 'svc_get_session', { projectId: project.id });
          return s.hasActiveWorkflows ? null : s;
        },
        20_000,
        'the resumed deploy',
      );
      expect(done.lastWorkflow).toMatchObject({ id: deploy.workflowId, status: 'completed' });
      expect(done.previewUrls.some((u: any) => u.kind === 'deployment')).toBe(true);
      const { messages } = await toolResult(second.mcpUrl, token, 'svc_get_messages', {
        projectId: project.id,
        limit: 500,
      });
      expect(messages.filter((m: any) => m.type === 'question')).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM mid-build records the workflow as failed/interrupted, kills the build process, and exits 0', async () => {
    const { writeFileSync, readFileSync, existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dataDir = tempDir();
    const config = join(dataDir, 'builder.json');
    writeFileSync(
      config,
      JSON.stringify({
        killGraceMs: 500,
        build: { command: `echo $$ > ${dataDir}/build.pid; echo started; sleep 600` },
      }),
    );
    const token = cliToken(dataDir, 'alice');
    // Unsandboxed: the command writes its pid (a pid of this machine) outside its workspace.
    const server = await spawnHttpServer(dataDir, [
      '--builder',
      'command',
      '--builder-config',
      config,
      '--no-build-sandbox',
    ]);
    const project = await toolResult(server.mcpUrl, token, 'svc_create_project', { name: 'Shutdown' });
    const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
    });
    await waitFor(
      () => existsSync(`${dataDir}/build.pid`) && readFileSync(`${dataDir}/build.pid`, 'utf8').trim(),
      10_000,
      'the build to start',
    );
    const pid = Number(readFileSync(`${dataDir}/build.pid`, 'utf8'));
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(() => process.kill(pid, 0)).toThrow();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(`${dataDir}/mobile-builder.db`, { readonly: true });
    expect(db.prepare('select status, error_code from workflows where id = ?').get(sent.workflowId)).toEqual({
      status: 'failed',
      error_code: 'interrupted',
    });
    db.close();
  });
});

describe('the README worked session', () => {
  it('scripts/demo-session.sh runs end to end against the real bin, and its preview and deployment URLs open', async () => {
    const { ROOT, runCommand } = await import('./helpers.js');
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'newcomer');
    // Steps long enough that step 6's first build is still running when the script cancels it
    // (four curl | node calls later, on a busy machine); the script waits on states otherwise.
    const server = await spawnHttpServer(dataDir, ['--scripted-step-ms', '2000']);
    try {
      const run = await runCommand('bash', ['scripts/demo-session.sh'], {
        cwd: ROOT,
        env: { ...process.env, TOKEN: token, MCP_URL: server.mcpUrl },
        timeoutMs: 300_000,
      });
      expect(run.status, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toContain('question: Which app identifier');
      expect(run.stdout).toContain('queued build: cancelled');
      expect(run.stdout).toContain('running build: cancelled');
      expect(run.stdout).toContain('cancelling the first again, cancelled: false');
      expect(run.stdout).toMatch(/^ {3}deploy #1: web$/m);
      expect(run.stdout).toContain('-32004 Resource not found: {"resource":"workflow","reason":"none active"}');
      const preview = /^PREVIEW=(.+)$/m.exec(run.stdout)![1]!;
      const deployment = /^DEPLOYMENT=(.+)$/m.exec(run.stdout)![1]!;
      for (const url of [preview, deployment]) {
        const page = await rawHttp(url);
        expect(page.status, url).toBe(200);
        expect(page.text).toContain('Todo demo');
      }
    } finally {
      await server.stop();
    }
  });
});

describe('two server processes on one data dir', () => {
  it('a cancel and an answer sent to one process reach the workflow the other process runs; the one-active rule holds across both', async () => {
    const { writeFileSync } = await import('node:fs');
    const { runCli } = await import('./bin-helpers.js');
    const dataDir = tempDir();
    const plans = `${dataDir}/plans.json`;
    writeFileSync(plans, JSON.stringify({ polling: { requestsPerMinute: 100_000 } }));
    const token = cliToken(dataDir, 'alice');
    expect(runCli(['user', 'set-plan', 'alice', 'polling', '--plans', plans, '--data-dir', dataDir]).status).toBe(0);
    const a = await spawnHttpServer(dataDir, ['--scripted-step-ms', '800', '--plans', plans]);
    const b = await spawnHttpServer(dataDir, ['--scripted-step-ms', '800', '--plans', plans]);
    try {
      const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Shared' });
      const running = await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build on A',
      });
      const queued = await toolResult(b.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build on B',
      });
      expect([running.status, queued.status]).toEqual(['running', 'queued']);
      const cancelled = await toolResult(b.mcpUrl, token, 'svc_cancel_workflow', {
        projectId: project.id,
        workflowId: running.workflowId,
      });
      expect(cancelled).toEqual({ workflowId: running.workflowId, status: 'cancelled', cancelled: true });
      // The queued one starts in one of the two processes, never both.
      const session = await waitFor(
        async () => {
          const s = await toolResult(a.mcpUrl, token, 'svc_get_session', { projectId: project.id });
          return s.activeWorkflow?.id === queued.workflowId ? s : null;
        },
        15_000,
        'the queued workflow to start',
      );
      expect(session.queuedWorkflows).toEqual([]);
      await toolResult(a.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });

      const deploy = await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'deploy',
        kind: 'deploy',
      });
      const question = await waitFor(
        async () => (await toolResult(b.mcpUrl, token, 'svc_get_session', { projectId: project.id })).pendingQuestion,
        30_000,
        'the question',
      );
      await toolResult(b.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'com.example.shared',
        questionId: question.questionId,
      });
      const done = await waitFor(
        async () => {
          const s = await toolResult(a.mcpUrl, token, 'svc_get_session', { projectId: project.id });
          return s.hasActiveWorkflows ? null : s;
        },
        30_000,
        'the deploy to finish',
      );
      expect(done.lastWorkflow).toMatchObject({ id: deploy.workflowId, status: 'completed' });
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
