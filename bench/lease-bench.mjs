// `npm run bench:leases`: the cost and the effect of workflow leases (docs/workflows.md, "Leases").
//
// 1. Heartbeat cost: one server runs BENCH_WORKFLOWS workflows that never finish; the store is
//    sampled every 25 ms for BENCH_SECONDS and each change of a workflow's lease end is one
//    heartbeat write. Prints writes per second per running workflow.
// 2. Takeover time: two servers share a data dir under different runner hosts (SVC_RUNNER_HOST,
//    as two containers on one volume); the one running a build is killed with SIGKILL, and the
//    time until the other has recorded the workflow `failed`/`interrupted` is measured,
//    BENCH_KILLS times (default 5). Prints the median, min and max beside the lease length, and
//    `ok`/`short` against the goal: a takeover within 3 s with the default settings.
//
// Options (env): BENCH_LEASE_MS (default: the server's default, 2500), BENCH_SECONDS (default 10),
// BENCH_WORKFLOWS (default 2), BENCH_KILLS (default 5).
import Database from 'better-sqlite3';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
// The server's own default (the settings table's), from the build this bench runs.
const { DEFAULTS } = await import('../dist/core/defaults.js');
const DEFAULT_LEASE_MS = DEFAULTS.leaseMs;
const leaseArgs = process.env.BENCH_LEASE_MS ? ['--lease-ms', process.env.BENCH_LEASE_MS] : [];
const leaseMs = Number(process.env.BENCH_LEASE_MS ?? DEFAULT_LEASE_MS);
const heartbeatMs = Math.min(500, Math.floor(leaseMs / 5));
const TAKEOVER_GOAL_MS = 3000;
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const workflows = Number(process.env.BENCH_WORKFLOWS ?? 2);
const kills = Number(process.env.BENCH_KILLS ?? 5);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function cli(args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

function serve(dataDir, host, extra = []) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--http',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--builder',
      'scripted',
      ...leaseArgs,
      '--log-level',
      'warn',
      ...extra,
    ],
    {
      env: { ...process.env, SVC_RUNNER_HOST: host },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(err);
      if (m) resolve({ child, mcpUrl: `${m[1]}/mcp`, exited: new Promise((r) => child.once('exit', r)) });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
}

let nextId = 1;
async function tool(mcpUrl, token, name, args) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json();
  if (!body.result?.structuredContent) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body.result.structuredContent;
}

function setUp() {
  const dataDir = mkdtempSync(join(tmpdir(), 'mbm-lease-bench-'));
  const token = cli(['token', 'create', '--user', 'bench', '--data-dir', dataDir]).trim().split('\n').at(-1);
  const plans = join(dataDir, 'plans.json');
  writeFileSync(
    plans,
    JSON.stringify({
      bench: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 1_000_000, maxProjects: 1_000_000 },
    }),
  );
  cli(['user', 'set-plan', 'bench', 'bench', '--plans', plans, '--data-dir', dataDir]);
  return { dataDir, token, plans };
}

async function heartbeatCost() {
  const { dataDir, token, plans } = setUp();
  const server = await serve(dataDir, 'bench-a', [
    '--scripted-step-ms',
    '3600000',
    '--plans',
    plans,
    '--max-concurrent-workflows',
    String(workflows),
  ]);
  try {
    const ids = [];
    for (let i = 0; i < workflows; i++) {
      const project = await tool(server.mcpUrl, token, 'svc_create_project', { name: `Bench ${i}` });
      ids.push(
        (
          await tool(server.mcpUrl, token, 'svc_send_message', {
            projectId: project.id,
            message: 'build',
            kind: 'build',
          })
        ).workflowId,
      );
    }
    const db = new Database(join(dataDir, 'mobile-builder.db'), { readonly: true });
    const read = db.prepare('select id, lease_expires_at from workflows where status = ?');
    const last = new Map();
    let changes = 0;
    const start = Date.now();
    while (Date.now() - start < seconds * 1000) {
      for (const row of read.all('running')) {
        if (last.has(row.id) && last.get(row.id) !== row.lease_expires_at) changes++;
        last.set(row.id, row.lease_expires_at);
      }
      await sleep(25);
    }
    const elapsed = (Date.now() - start) / 1000;
    db.close();
    return { running: last.size, writesPerSecondPerWorkflow: changes / elapsed / Math.max(1, last.size) };
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function takeoverTimes() {
  const { dataDir, token, plans } = setUp();
  const survivor = await serve(dataDir, 'bench-b', ['--scripted-step-ms', '3600000', '--plans', plans]);
  const db = new Database(join(dataDir, 'mobile-builder.db'), { readonly: true });
  const statusOf = db.prepare('select status, error_code, runner_id from workflows where id = ?');
  const times = [];
  try {
    for (let i = 0; i < kills; i++) {
      const victim = await serve(dataDir, 'bench-a', ['--scripted-step-ms', '3600000', '--plans', plans]);
      const project = await tool(victim.mcpUrl, token, 'svc_create_project', { name: `Kill ${i}` });
      const sent = await tool(victim.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build',
        kind: 'build',
      });
      const row = statusOf.get(sent.workflowId);
      if (row.status !== 'running' || !row.runner_id.startsWith('bench-a:'))
        throw new Error(`expected the victim to run it: ${JSON.stringify(row)}`);
      // Kill at a random point of the heartbeat cycle, as a real crash would.
      await sleep(Math.random() * heartbeatMs);
      victim.child.kill('SIGKILL');
      const killedAt = Date.now();
      await victim.exited;
      for (;;) {
        const now = statusOf.get(sent.workflowId);
        if (now.status === 'failed') {
          if (now.error_code !== 'interrupted') throw new Error(`unexpected ${JSON.stringify(now)}`);
          break;
        }
        if (Date.now() - killedAt > leaseMs * 3 + 10_000) throw new Error('no takeover');
        await sleep(10);
      }
      times.push(Date.now() - killedAt);
      process.stderr.write(`takeover ${i + 1}/${kills}: ${times.at(-1)} ms\n`);
    }
  } finally {
    db.close();
    survivor.child.kill('SIGKILL');
    await survivor.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const mid = Math.floor(times.length / 2);
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  return { median, min: times[0], max: times.at(-1), runs: times.length };
}

const cost = await heartbeatCost();
const takeover = await takeoverTimes();
const report = {
  leaseMs,
  heartbeatMs,
  reaper: 'every 1000 ms, and when the earliest lease it saw ends',
  heartbeatWritesPerSecondPerRunningWorkflow: Number(cost.writesPerSecondPerWorkflow.toFixed(2)),
  runningWorkflowsSampled: cost.running,
  takeoverAfterSigkillMs: takeover,
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'leases.json'),
  `${JSON.stringify({ date: new Date().toISOString(), defaults: leaseArgs.length === 0, goalMs: TAKEOVER_GOAL_MS, ...report }, null, 2)}\n`,
);
const goal =
  leaseArgs.length === 0
    ? `; goal <= ${TAKEOVER_GOAL_MS} ms with the defaults: ${takeover.median <= TAKEOVER_GOAL_MS ? 'ok' : 'short'}`
    : '';
process.stdout.write(
  `lease takeover after SIGKILL: median ${takeover.median} ms of ${takeover.runs} (${takeover.min}-${takeover.max}), lease ${leaseMs} ms, heartbeat ${heartbeatMs} ms, ${report.heartbeatWritesPerSecondPerRunningWorkflow} heartbeat writes/s per running workflow${goal}\n`,
);
