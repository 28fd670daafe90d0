/**
 * Roles (docs/operators.md "Roles"): the real bin as `serve --role api` and as `worker` processes on one
 * SQLite data dir (how one host runs them; the PostgreSQL store runs them across machines). Sends
 * through the API node are built by a worker, never by the API node; a worker's `--health-port`
 * answers `GET /healthz`; SIGTERM drains a worker (running builds finish, up to
 * `--drain-timeout-ms`; a workflow waiting for input is released at once and resumed by another
 * worker); wrong set-ups are refused with exit code 2; `migrate --database-url` on PostgreSQL; an
 * API node and a worker of the bundled bin on PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { BIN, tempDir, toolResult, waitFor } from './helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

/** A worker process, started and ready. */
interface SpawnedWorker {
  child: ChildProcess;
  /** The runner id of its ready line. */
  runner: string;
  /** `http://127.0.0.1:PORT` of its health port, when started with `--health-port`. */
  health: string | undefined;
  stderr: () => string;
  /** Sends `signal` (unless it has exited) and resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `worker --data-dir DIR ...extra` and waits for its `... worker <runner id> ready` line. */
async function spawnWorker(dataDir: string, extra: string[]): Promise<SpawnedWorker> {
  const child = spawn(process.execPath, [BIN, 'worker', '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await waitFor(
    () => /^mobile-builder-mcp \S+ worker (\S+) ready \((.*)\)$/m.exec(err),
    20_000,
    `the worker to be ready (stderr: ${err})`,
  );
  // A worker writes nothing on stdout (no MCP over stdio).
  expect(out).toBe('');
  return {
    child,
    runner: ready[1]!,
    health: /health (http:\/\/\S+)\/healthz/.exec(ready[2]!)?.[1],
    stderr: () => err,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function healthOf(base: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/healthz`);
  return { status: res.status, body: await res.json() };
}

function readStore(dataDir: string) {
  const db = new Database(join(dataDir, 'mobile-builder.db'), { readonly: true });
  try {
    return {
      workflows: db
        .prepare('select id, project_id, status, error_code, step_index, runner_id from workflows order by seq')
        .all() as any[],
      messages: db.prepare('select seq, role, type, content, workflow_id from messages order by seq').all() as any[],
    };
  } finally {
    db.close();
  }
}

const workflowOf = (dataDir: string, id: string) => readStore(dataDir).workflows.find((w) => w.id === id);
const resultsOf = (dataDir: string, id: string) =>
  readStore(dataDir)
    .messages.filter((m) => m.workflow_id === id && m.type === 'result')
    .map((m) => m.content as string);

describe('serve --role api and workers on one SQLite data dir', () => {
  const dataDir = tempDir('mbm-roles-');
  const gate = join(dataDir, 'gate');
  const config = join(dataDir, 'builder.json');
  // The instruction picks the build: who runs it, one that waits for a file, one that never ends, one that asks.
  const command = [
    'case "$SVC_INSTRUCTION" in',
    'who) echo "::result built by $PPID" ;;',
    `gate) echo "::step 1/1 waiting for the gate"; while [ ! -f ${gate} ]; do sleep 0.05; done; echo "::result through the gate" ;;`,
    'forever) echo "::step 1/1 forever"; sleep 1000 ;;',
    `ask) echo '::ask name {"prompt":"Name?"}'; read answer; echo "::result answer $answer" ;;`,
    'esac',
  ].join('\n');
  writeFileSync(config, JSON.stringify({ killGraceMs: 200, build: { command } }));
  const plans = join(dataDir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ polling: { requestsPerMinute: 100_000 } }));
  // Unsandboxed, so that $PPID is the worker's own pid (in the sandbox it is bubblewrap's).
  const workerArgs = [
    '--builder',
    'command',
    '--builder-config',
    config,
    '--no-build-sandbox',
    '--plans',
    plans,
    '--health-port',
    '0',
  ];
  let token: string;
  let api: SpawnedServer;

  beforeAll(async () => {
    token = cliToken(dataDir, 'alice');
    expect(runCli(['user', 'set-plan', 'alice', 'polling', '--plans', plans, '--data-dir', dataDir]).status).toBe(0);
    // An API node needs no builder config (it builds nothing), even with --builder command.
    api = await spawnHttpServer(dataDir, [
      '--role',
      'api',
      '--builder',
      'command',
      '--plans',
      plans,
      '--health-port',
      '0',
    ]);
  });
  afterAll(async () => {
    await api?.stop();
  });

  const send = async (name: string, message: string) => {
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name });
    const sent = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message,
      kind: 'build',
    });
    return { projectId: project.id as string, workflowId: sent.workflowId as string, status: sent.status as string };
  };

  it('a send through the API node is built by the worker, never by the API node; both say their role on /healthz', async () => {
    expect(api.stderr()).toMatch(/builds run on workers \(role api\)/);
    const apiHealth = /health: (http:\/\/\S+)\/healthz/.exec(api.stderr())![1]!;
    expect(await healthOf(apiHealth)).toMatchObject({ status: 200, body: { status: 'ok', role: 'api' } });
    expect(await healthOf(api.url)).toEqual({ status: 200, body: { status: 'ok', role: 'api' } });

    const worker = await spawnWorker(dataDir, workerArgs);
    try {
      expect(worker.runner).toMatch(new RegExp(`:${worker.child.pid}:[0-9a-f]{12}$`));
      expect(await healthOf(worker.health!)).toEqual({
        status: 200,
        body: { status: 'ok', role: 'worker', runner: worker.runner },
      });
      const sent = await send('Built elsewhere', 'who');
      // The API node claims nothing: the send is queued for a worker, and answers `running` when
      // the worker claimed it within the claim wait (docs/workflows.md "Nodes that claim nothing").
      expect(['queued', 'running']).toContain(sent.status);
      await waitFor(
        () => workflowOf(dataDir, sent.workflowId)?.status === 'completed',
        30_000,
        'the worker to build it',
      );
      expect(resultsOf(dataDir, sent.workflowId)).toEqual([`built by ${worker.child.pid}`]);
      expect(worker.child.pid).not.toBe(api.child.pid);
      expect(worker.stderr()).toContain(sent.workflowId);
      expect(api.stderr()).not.toContain('workflow started');
      // Anything else on the health port is 404.
      expect((await fetch(`${worker.health}/mcp`)).status).toBe(404);
      expect((await fetch(`${worker.health}/healthz`, { method: 'POST' })).status).toBe(404);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  it('SIGTERM drains a worker: /healthz 503 draining, nothing new claimed, the running build finishes, exit 0', async () => {
    const worker = await spawnWorker(dataDir, workerArgs);
    try {
      const running = await send('Drained', 'gate');
      await waitFor(
        () => workflowOf(dataDir, running.workflowId)?.step_index === 1,
        30_000,
        'the build to wait at the gate',
      );
      worker.child.kill('SIGTERM');
      const draining = await waitFor(
        async () => {
          const health = await healthOf(worker.health!);
          return health.status === 503 ? health : null;
        },
        15_000,
        '/healthz to say draining',
      );
      expect(draining.body).toEqual({
        status: 'unavailable',
        reason: 'draining',
        role: 'worker',
        runner: worker.runner,
      });
      // Sent while it drains: it stays queued (no other worker runs).
      const later = await send('Not claimed', 'who');
      expect(workflowOf(dataDir, running.workflowId).status).toBe('running');
      writeFileSync(gate, '');
      expect(await worker.exited).toBe(0);
      expect(workflowOf(dataDir, running.workflowId)).toMatchObject({ status: 'completed', runner_id: null });
      expect(resultsOf(dataDir, running.workflowId)).toEqual(['through the gate']);
      expect(workflowOf(dataDir, later.workflowId)).toMatchObject({ status: 'queued', runner_id: null });

      // The next worker takes the queued one.
      const next = await spawnWorker(dataDir, workerArgs);
      try {
        await waitFor(
          () => workflowOf(dataDir, later.workflowId)?.status === 'completed',
          30_000,
          'the next worker to build it',
        );
        expect(resultsOf(dataDir, later.workflowId)).toEqual([`built by ${next.child.pid}`]);
      } finally {
        expect(await next.stop()).toBe(0);
      }
    } finally {
      await worker.stop('SIGKILL');
    }
  });

  it('past --drain-timeout-ms a running build is interrupted; the worker still exits 0', async () => {
    const worker = await spawnWorker(dataDir, [...workerArgs, '--drain-timeout-ms', '300']);
    try {
      const sent = await send('Too long', 'forever');
      await waitFor(() => workflowOf(dataDir, sent.workflowId)?.step_index === 1, 30_000, 'the build to start');
      expect(await worker.stop('SIGTERM')).toBe(0);
      expect(workflowOf(dataDir, sent.workflowId)).toMatchObject({
        status: 'failed',
        error_code: 'interrupted',
        runner_id: null,
      });
    } finally {
      await worker.stop('SIGKILL');
    }
  });

  it('a workflow waiting for input is released at once on SIGTERM (no drain wait), and another worker resumes it after the answer', async () => {
    // A drain of ten minutes: the worker exits long before only because it holds nothing running.
    const first = await spawnWorker(dataDir, [...workerArgs, '--drain-timeout-ms', '600000']);
    let second: SpawnedWorker | undefined;
    try {
      const sent = await send('Asked', 'ask');
      await waitFor(() => workflowOf(dataDir, sent.workflowId)?.status === 'waiting_for_input', 30_000, 'the question');
      expect(await first.stop('SIGTERM')).toBe(0);
      expect(workflowOf(dataDir, sent.workflowId)).toMatchObject({ status: 'waiting_for_input', runner_id: null });

      second = await spawnWorker(dataDir, workerArgs);
      const session = await toolResult(api.mcpUrl, token, 'svc_get_session', { projectId: sent.projectId });
      await toolResult(api.mcpUrl, token, 'svc_send_message', {
        projectId: sent.projectId,
        questionId: session.pendingQuestion.id,
        message: 'Ada',
      });
      await waitFor(
        () => workflowOf(dataDir, sent.workflowId)?.status === 'completed',
        30_000,
        'the second worker to resume it',
      );
      expect(resultsOf(dataDir, sent.workflowId)).toEqual(['answer Ada']);
    } finally {
      await first.stop('SIGKILL');
      if (second) expect(await second.stop()).toBe(0);
    }
  });
});

describe('set-ups the command line refuses', () => {
  it('serve --role worker --http: exit 2 and the reason', () => {
    const dataDir = tempDir();
    for (const [args, env] of [
      [['serve', '--role', 'worker', '--http'], {}],
      [['serve', '--http'], { SVC_ROLE: 'worker' }],
    ] as const) {
      const out = runCli([...args, '--data-dir', dataDir], env);
      expect(out.status).toBe(2);
      expect(out.stderr).toMatch(/^mobile-builder-mcp: serve --role worker takes no --http: a worker serves no MCP/);
      expect(out.stdout).toBe('');
    }
  });

  it('a --database-url that is not PostgreSQL, on every command that takes one: exit 2, the password never printed', () => {
    const dataDir = tempDir();
    const commands = [
      ['serve'],
      ['worker'],
      ['migrate'],
      ['token', 'create', '--user', 'a'],
      ['token', 'list'],
      ['token', 'revoke', 'x'],
      ['login-code', '--user', 'a'],
      ['user', 'list'],
      ['user', 'set-plan', 'a', 'free'],
    ];
    for (const command of commands) {
      const byFlag = runCli([...command, '--data-dir', dataDir, '--database-url', 'mysql://me:s3cret@db.example/app']);
      const byEnv = runCli([...command, '--data-dir', dataDir], { SVC_DATABASE_URL: 'file:///var/s3cret.db' });
      for (const out of [byFlag, byEnv]) {
        expect(out.status, command.join(' ')).toBe(2);
        expect(out.stderr).toMatch(/^mobile-builder-mcp: --database-url \(SVC_DATABASE_URL\) must be a PostgreSQL URL/);
        expect(out.stderr + out.stdout).not.toContain('s3cret');
      }
    }
  });
});

describe.skipIf(!postgresAvailable())('migrate --database-url on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
  });
  afterAll(() => database?.drop());

  it('applies drizzle-pg/ and says so, then finds nothing to do; the password is never printed', () => {
    const url = new URL(database.url);
    // The tests' cluster trusts local connections, so any password is accepted (and must not be shown).
    url.password = 's3cret';
    const first = runCli(['migrate', '--database-url', url.toString()]);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^Applied \d+ migrations?; database is up to date: postgres(ql)?:\/\/[^:]+:\*\*\*@/);
    const again = runCli(['migrate'], { SVC_DATABASE_URL: url.toString() });
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/^Database is up to date: \S+ \(no migration to apply\)\n$/);
    expect(first.stdout + again.stdout).not.toContain('s3cret');
  });
});

describe.skipIf(!postgresAvailable())('an API node and a worker of the built bin on PostgreSQL', () => {
  let database: TestDatabase;
  const dataDir = tempDir('mbm-roles-pg-');
  let api: SpawnedServer | undefined;
  let worker: SpawnedWorker | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await database?.drop();
  });

  it('answers tool calls through the API node (its request limiter counts in the database) and the worker builds the send', async () => {
    const db = ['--database-url', database.url];
    const token = runCli(['token', 'create', '--user', 'alice', '--data-dir', join(dataDir, 'cli'), ...db])
      .stdout.trim()
      .split('\n')
      .at(-1)!;
    api = await spawnHttpServer(join(dataDir, 'api'), ['--role', 'api', ...db]);
    worker = await spawnWorker(join(dataDir, 'worker'), ['--builder', 'scripted', '--scripted-step-ms', '10', ...db]);
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name: 'On PostgreSQL' });
    expect(project.id).toMatch(/^[0-9a-f-]{36}$/);
    const sent = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'make it',
      kind: 'build',
    });
    await waitFor(
      async () =>
        (await toolResult(api!.mcpUrl, token, 'svc_get_session', { projectId: project.id })).lastWorkflow?.status ===
        'completed',
      30_000,
      'the worker to build it',
    );
    expect(worker.stderr()).toContain(sent.workflowId);
    expect(api.stderr()).not.toMatch(/"level":50/);
  });
});
