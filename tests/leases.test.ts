/**
 * Leases across server processes (docs/workflows.md, "Leases"): two real servers on one data dir,
 * each with its own runner host (`SVC_RUNNER_HOST`, as two containers sharing a volume would
 * have), so neither can see the other's pids. A runner that dies or stalls past its lease is taken
 * over by the other; a stalled runner that wakes up writes nothing and its build is killed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { isGroupAlive, isReusedGroup, processStart } from '../src/workflows/process-groups.js';
import { cliToken, runCli, spawnHttpServer } from './bin-helpers.js';
import { tempDir, toolResult, waitFor } from './helpers.js';

const LEASE = ['--lease-ms', '1500'];

function readStore(dataDir: string) {
  const db = new Database(join(dataDir, 'mobile-builder.db'), { readonly: true });
  try {
    return {
      workflows: db
        .prepare(
          'select id, status, error_code, step_index, step_name, runner_id, finished_at from workflows order by seq',
        )
        .all() as any[],
      messages: db.prepare('select seq, role, type, content, workflow_id from messages order by seq').all() as any[],
      groups: db.prepare('select * from process_groups').all() as any[],
    };
  } finally {
    db.close();
  }
}

function pollingPlan(dataDir: string): string {
  const plans = join(dataDir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ polling: { requestsPerMinute: 100_000 } }));
  expect(runCli(['user', 'set-plan', 'alice', 'polling', '--plans', plans, '--data-dir', dataDir]).status).toBe(0);
  return plans;
}

describe('leases across two server processes with different runner hosts', () => {
  it('SIGKILL of the runner mid-build: the survivor fails it as interrupted, runs the next queued workflow, no message lost, seq gapless', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    const plans = pollingPlan(dataDir);
    const a = await spawnHttpServer(dataDir, ['--scripted-step-ms', '600000', ...LEASE, '--plans', plans], {
      SVC_RUNNER_HOST: 'host-a',
    });
    const b = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10', ...LEASE, '--plans', plans], {
      SVC_RUNNER_HOST: 'host-b',
    });
    try {
      const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Leased' });
      const first = await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build one',
        kind: 'build',
      });
      const second = await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build two',
        kind: 'build',
      });
      expect([first.status, second.status]).toEqual(['running', 'queued']);
      await waitFor(() => readStore(dataDir).workflows[0].step_index >= 1, 15_000, 'the first step on A');
      expect(readStore(dataDir).workflows[0].runner_id).toMatch(/^host-a:/);
      const before = readStore(dataDir).messages;
      await a.stop('SIGKILL');

      const done = await waitFor(
        () => {
          const s = readStore(dataDir);
          return s.workflows[1].status === 'completed' ? s : null;
        },
        30_000,
        'the queued workflow to complete on B',
      );
      expect(done.workflows[0]).toMatchObject({
        id: first.workflowId,
        status: 'failed',
        error_code: 'interrupted',
        runner_id: null,
      });
      expect(done.workflows[1]).toMatchObject({ id: second.workflowId, status: 'completed' });
      expect(done.messages.slice(0, before.length)).toEqual(before);
      expect(done.messages.map((m) => m.seq)).toEqual(done.messages.map((_, i) => i + 1));
      expect(done.messages.find((m) => m.workflow_id === first.workflowId && m.type === 'error').content).toMatch(
        /interrupted/,
      );
      // Both instructions the server acknowledged are stored.
      expect(done.messages.filter((m) => m.type === 'instruction').map((m) => m.content)).toEqual([
        'build one',
        'build two',
      ]);
      const session = await toolResult(b.mcpUrl, token, 'svc_get_session', { projectId: project.id });
      expect(session.hasActiveWorkflows).toBe(false);
    } finally {
      await a.stop('SIGKILL');
      await b.stop();
    }
  });

  it('SIGSTOP past the lease: the other server takes over; after SIGCONT the woken runner writes nothing and its build processes are killed', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    const plans = pollingPlan(dataDir);
    const config = join(dataDir, 'builder.json');
    const pidFile = join(dataDir, 'build.pid');
    writeFileSync(
      config,
      JSON.stringify({ killGraceMs: 500, build: { command: `echo $$ > ${pidFile}; echo started; sleep 1000` } }),
    );
    // Unsandboxed: the command's pids and files outside its workspace are this machine's (in the
    // sandbox a build also dies with its server, so there is no orphan to find).
    const a = await spawnHttpServer(
      dataDir,
      ['--builder', 'command', '--builder-config', config, '--no-build-sandbox', ...LEASE, '--plans', plans],
      { SVC_RUNNER_HOST: 'host-a' },
    );
    const b = await spawnHttpServer(
      dataDir,
      ['--builder', 'command', '--builder-config', config, '--no-build-sandbox', ...LEASE, '--plans', plans],
      { SVC_RUNNER_HOST: 'host-b' },
    );
    let stopped = false;
    try {
      const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Paused' });
      const sent = await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build',
        kind: 'build',
      });
      expect(sent.status).toBe('running');
      await waitFor(
        () =>
          existsSync(pidFile) &&
          readFileSync(pidFile, 'utf8').trim() &&
          readStore(dataDir).messages.some((m) => m.content.includes('started') && m.role === 'agent'),
        15_000,
        'the build to start on A',
      );
      const buildPid = Number(readFileSync(pidFile, 'utf8'));
      a.child.kill('SIGSTOP');
      stopped = true;

      const taken = await waitFor(
        () => {
          const s = readStore(dataDir);
          return s.workflows[0].status === 'failed' ? s : null;
        },
        30_000,
        'B to take the workflow over',
      );
      expect(taken.workflows[0]).toMatchObject({ id: sent.workflowId, error_code: 'interrupted' });
      expect(isGroupAlive(buildPid)).toBe(true); // A is frozen, so its build still runs

      a.child.kill('SIGCONT');
      stopped = false;
      // A notices it lost the lease: it says so, and its build's process group dies.
      await waitFor(() => a.stderr().includes('lost the lease'), 15_000, 'A to notice the lost lease');
      await waitFor(() => !isGroupAlive(buildPid), 15_000, "the woken runner's build process group to be killed");
      // A graceful stop waits for A's run to end; still nothing written by A to the workflow or
      // the conversation. (Forgetting the row of a process group it has just killed is cleanup of
      // its own host, and may be done by A or by B's sweep.)
      expect(taken.groups.map((g) => g.pgid)).toEqual([buildPid]);
      expect(await a.stop('SIGTERM')).toBe(0);
      const after = readStore(dataDir);
      expect({ workflows: after.workflows, messages: after.messages }).toEqual({
        workflows: taken.workflows,
        messages: taken.messages,
      });
      expect(after.groups.every((g) => taken.groups.some((t) => t.pgid === g.pgid))).toBe(true);
    } finally {
      if (stopped) a.child.kill('SIGCONT');
      await a.stop('SIGKILL');
      await b.stop();
    }
  });

  it('command builder: after SIGKILL of its server the build keeps running until a restarted server kills its group, and only then does the next workflow start', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    const config = join(dataDir, 'builder.json');
    const pidFile = join(dataDir, 'build.pid');
    // The first build ignores SIGTERM and sleeps; the second reports whether the first's group lives.
    const command = [
      `if [ ! -f ${pidFile} ]; then echo $$ > ${pidFile}; trap '' TERM; echo started; sleep 1000;`,
      `else if kill -0 -- -$(cat ${pidFile}) 2>/dev/null; then echo first-group-alive; else echo first-group-gone; fi; fi`,
    ].join(' ');
    writeFileSync(config, JSON.stringify({ killGraceMs: 200, build: { command } }));
    // Unsandboxed: in the sandbox the build dies with its server (--die-with-parent), no orphan.
    const first = await spawnHttpServer(dataDir, [
      '--builder',
      'command',
      '--builder-config',
      config,
      '--no-build-sandbox',
    ]);
    const project = await toolResult(first.mcpUrl, token, 'svc_create_project', { name: 'Orphans' });
    const one = await toolResult(first.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'one',
      kind: 'build',
    });
    const two = await toolResult(first.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'two',
      kind: 'build',
    });
    expect([one.status, two.status]).toEqual(['running', 'queued']);
    await waitFor(
      () => readStore(dataDir).groups.length === 1 && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim(),
      15_000,
      'the build group to be recorded',
    );
    const pgid = Number(readFileSync(pidFile, 'utf8'));
    const leader = processStart(pgid);
    expect(readStore(dataDir).groups[0]).toMatchObject({ pgid, workflow_id: one.workflowId, leader_start: leader });
    await first.stop('SIGKILL');
    expect(isGroupAlive(pgid)).toBe(true); // the orphaned build outlived its server

    const second = await spawnHttpServer(dataDir, [
      '--builder',
      'command',
      '--builder-config',
      config,
      '--no-build-sandbox',
    ]);
    try {
      const done = await waitFor(
        () => {
          const s = readStore(dataDir);
          return s.workflows[1].status === 'completed' ? s : null;
        },
        30_000,
        'the second workflow to complete',
      );
      expect(done.workflows[0]).toMatchObject({ status: 'failed', error_code: 'interrupted' });
      expect(isGroupAlive(pgid)).toBe(false);
      expect(done.messages.some((m) => m.content.includes('first-group-gone'))).toBe(true);
      expect(done.messages.some((m) => m.content.includes('first-group-alive'))).toBe(false);
      expect(done.groups).toEqual([]);
    } finally {
      // Only if it is still our group: pids wrap around quickly on a busy machine.
      if (isGroupAlive(pgid) && !isReusedGroup(pgid, leader)) process.kill(-pgid, 'SIGKILL');
      await second.stop();
    }
  });
});
