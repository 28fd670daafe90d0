// `npm run bench:multinode` (also part of `npm run bench`): the service as API nodes and build
// workers on one PostgreSQL database (README.md "Running on several machines"), measured in one run.
//
// 1. Takeover after a worker's SIGKILL: one API node and two workers; a project gets a build that
//    never ends (scripted steps of an hour) and a second one queued behind it; the worker running
//    the first is SIGKILLed at a random point of its heartbeat cycle, and the bench records the
//    time until another node has failed it as `interrupted`, and until the queued build has started
//    on the surviving worker. BENCH_KILLS times (default 5; a fresh worker replaces the dead one
//    each time); median, min and max beside the lease.
// 2. Builds per minute with 1 and then 2 workers: BENCH_BUILDS builds (default 16), one per
//    project, sent at once through the API node; each worker runs 2 at a time
//    (--max-concurrent-workflows 2; the bench plan lifts the running bound). The builder is
//    `scripted`: its steps SLEEP BENCH_STEP_MS each (default 1 000 ms), then it writes and
//    publishes a small web preview (a blob in PostgreSQL), so the figure measures the queue,
//    claims, leases and publishing, not CPU. The ratio 2 workers / 1 worker is printed (goal: at
//    least 1.85x), and the CPU the workers spent per build (the worker processes and their
//    children, over both rounds: everything outside the builder's sleeps; goal: at most 150 ms).
// 3. svc_get_project over HTTP on the PostgreSQL API node against a SQLite `serve --http` of the
//    same build (autocannon, BENCH_CONNECTIONS connections, BENCH_ROUNDS alternating rounds of
//    BENCH_SECONDS after a warm-up, as `npm run bench` loads ours against its baselines):
//    requests/s and server CPU per request of each, and the ratio PostgreSQL / SQLite (the median
//    of the per-round ratios).
//
// PostgreSQL: BENCH_DATABASE_URL or SVC_TEST_DATABASE_URL (a server where this role may create a
// database), else a throwaway cluster of Debian's server binaries (/usr/lib/postgresql/*/bin, as
// the tests start one; as `postgres` through runuser when root). With neither, the bench says so
// and exits 0. Options (env): BENCH_LEASE_MS (default: the server's default), BENCH_KILLS,
// BENCH_BUILDS, BENCH_STEP_MS, BENCH_SECONDS (default 5), BENCH_ROUNDS (default 2),
// BENCH_CONNECTIONS (default 32), BENCH_WARMUP_SECONDS (default 2).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { measureAlternating, prepareTarget, startChild, stopChild } from './http-target.mjs';
import { createDatabase, dropDatabase, startPostgres } from './postgres.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const { DEFAULTS } = await import('../dist/core/defaults.js');
const leaseMs = Number(process.env.BENCH_LEASE_MS ?? DEFAULTS.leaseMs);
const kills = Number(process.env.BENCH_KILLS ?? 5);
const builds = Number(process.env.BENCH_BUILDS ?? 16);
const stepMs = Number(process.env.BENCH_STEP_MS ?? 1000);
const SLOTS = 2;
const load = {
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  rounds: Number(process.env.BENCH_ROUNDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  warmup: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

// --- nodes ------------------------------------------------------------------------------------

function cli(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.slice(0, 2).join(' ')}: ${err}`)),
    );
  });
}

/** Spawns a node (its own process group) and resolves once `ready` matches its stderr. */
function node(name, args, ready) {
  const child = spawn(process.execPath, [BIN, ...args], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, SVC_RUNNER_HOST: name },
  });
  let err = '';
  const exited = new Promise((r) => child.once('exit', r));
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = ready.exec(err);
      if (m)
        resolve({
          name,
          child,
          match: m,
          exited,
          kill: (sig = 'SIGKILL') => {
            try {
              process.kill(-child.pid, sig);
            } catch {
              /* gone */
            }
            return exited;
          },
        });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${err}`)));
  });
}

/**
 * CPU time (clock ticks) of process `pid` and everything under it: its own, its ended children's,
 * and its live descendants' (the build processes, the sandbox).
 */
function treeTicks(pid) {
  const stats = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const f = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ');
      stats.set(Number(name), {
        parent: Number(f[1]),
        own: Number(f[11]) + Number(f[12]),
        ended: Number(f[13]) + Number(f[14]),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  let total = 0;
  const under = [pid];
  while (under.length > 0) {
    const p = under.pop();
    const s = stats.get(p);
    if (!s) continue;
    total += s.own + (p === pid ? s.ended : 0);
    for (const [child, c] of stats) if (c.parent === p) under.push(child);
  }
  return total;
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

// --- the run ----------------------------------------------------------------------------------

const server = await startPostgres();
if (server.skipped) {
  process.stdout.write(`bench:multinode: skipped (${server.skipped}).\n`);
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), 'mbm-multinode-bench-'));
const database = `bench_${randomBytes(4).toString('hex')}`;
const nodes = [];
let pool;
try {
  const databaseUrl = await createDatabase(server.adminUrl, database);
  await cli(['migrate', '--database-url', databaseUrl, '--data-dir', join(work, 'cli')]);
  const plans = join(work, 'plans.json');
  writeFileSync(
    plans,
    JSON.stringify({
      bench: {
        requestsPerMinute: 1_000_000,
        projectCreationsPerHour: 1_000_000,
        maxProjects: 1_000_000,
        maxRunningWorkflows: 1_000,
        maxQueuedWorkflows: 1_000,
      },
    }),
  );
  const token = (
    await cli(['token', 'create', '--user', 'bench', '--database-url', databaseUrl, '--data-dir', join(work, 'cli')])
  )
    .trim()
    .split('\n')
    .at(-1);
  await cli([
    'user',
    'set-plan',
    'bench',
    'bench',
    '--plans',
    plans,
    '--database-url',
    databaseUrl,
    '--data-dir',
    join(work, 'cli'),
  ]);
  pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const rows = async (text, params) => (await pool.query(text, params)).rows;

  const common = (name, extra) => [
    '--database-url',
    databaseUrl,
    '--data-dir',
    join(work, name),
    '--builder',
    'scripted',
    '--plans',
    plans,
    '--lease-ms',
    String(leaseMs),
    '--log-level',
    'warn',
    ...extra,
  ];
  const api = await node(
    'api-1',
    ['serve', '--http', '--role', 'api', '--port', '0', ...common('api-1', [])],
    /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/,
  );
  nodes.push(api);
  const mcpUrl = `${api.match[1]}/mcp`;
  let workerCount = 0;
  const startWorker = async (extra) => {
    const name = `worker-${++workerCount}`;
    const w = await node(
      name,
      ['worker', '--health-port', '0', '--max-concurrent-workflows', String(SLOTS), ...common(name, extra)],
      / worker (\S+) ready/,
    );
    nodes.push(w);
    return w;
  };
  const stopAll = async (list) => {
    for (const w of list) await w.kill('SIGTERM');
  };

  // 1. Takeover after SIGKILL.
  const holding = ['--scripted-step-ms', '3600000'];
  let live = [await startWorker(holding), await startWorker(holding)];
  const interruptedAfter = [];
  const startedAfter = [];
  for (let i = 0; i < kills; i++) {
    const project = await tool(mcpUrl, token, 'svc_create_project', { name: `Kill ${i}` });
    const first = await tool(mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
      kind: 'build',
    });
    const second = await tool(mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build again',
      kind: 'build',
    });
    let runner;
    while (
      !(runner = (
        await rows('select runner_id from workflows where id = $1 and status = $2', [first.workflowId, 'running'])
      )[0]?.runner_id)
    )
      await sleep(10);
    const victim = live.find((w) => runner.startsWith(`${w.name}:`));
    await sleep(Math.random() * Math.min(1000, leaseMs / 4)); // a random point of the heartbeat cycle
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    let interrupted = null;
    let started = null;
    while (interrupted === null || started === null) {
      const [a, b] = await Promise.all(
        [first.workflowId, second.workflowId].map(
          async (id) => (await rows('select status, error_code from workflows where id = $1', [id]))[0],
        ),
      );
      if (interrupted === null && a.status === 'failed') {
        if (a.error_code !== 'interrupted') throw new Error(`unexpected ${JSON.stringify(a)}`);
        interrupted = Date.now() - killedAt;
      }
      if (started === null && b.status === 'running') started = Date.now() - killedAt;
      if (Date.now() - killedAt > leaseMs * 4 + 20_000) throw new Error('no takeover');
      await sleep(10);
    }
    interruptedAfter.push(interrupted);
    startedAfter.push(started);
    process.stderr.write(
      `takeover ${i + 1}/${kills}: interrupted after ${interrupted} ms, next build started after ${started} ms\n`,
    );
    await tool(mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    live = [...live.filter((w) => w !== victim), await startWorker(holding)];
  }
  await stopAll(live);

  // 2. Builds per minute with 1 and 2 workers.
  const throughput = async (workerTotal) => {
    const workers = [];
    for (let i = 0; i < workerTotal; i++) workers.push(await startWorker(['--scripted-step-ms', String(stepMs)]));
    const projects = await Promise.all(
      Array.from({ length: builds }, (_, i) =>
        tool(mcpUrl, token, 'svc_create_project', { name: `Throughput ${workerTotal}-${i}` }),
      ),
    );
    const ticksBefore = workers.map((w) => treeTicks(w.child.pid));
    const started = Date.now();
    const sent = await Promise.all(
      projects.map((p) =>
        tool(mcpUrl, token, 'svc_send_message', { projectId: p.id, message: 'build', kind: 'build' }),
      ),
    );
    const ids = sent.map((s) => s.workflowId);
    for (;;) {
      const [{ done, failed }] = await rows(
        "select count(*) filter (where status = 'completed')::int as done, count(*) filter (where status in ('failed', 'cancelled'))::int as failed from workflows where id = any($1)",
        [ids],
      );
      if (failed > 0) throw new Error(`${failed} builds failed`);
      if (done === ids.length) break;
      await sleep(20);
    }
    const seconds = (Date.now() - started) / 1000;
    const workerTicks = workers.reduce((sum, w, i) => sum + treeTicks(w.child.pid) - ticksBefore[i], 0);
    await stopAll(workers);
    return { seconds, perMinute: (builds / seconds) * 60, workerCpuMsPerBuild: (workerTicks * 10) / builds };
  };
  const one = await throughput(1);
  const two = await throughput(2);

  // 3. svc_get_project: the PostgreSQL API node against a SQLite server of the same build.
  const sqliteTarget = await prepareTarget(root);
  const benchProject = await tool(mcpUrl, token, 'svc_create_project', { name: 'Bench' });
  const request = (projectId, bearer) => ({
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_get_project', arguments: { projectId } },
    }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${bearer}`,
    },
  });
  const sqliteServer = await startChild(sqliteTarget.serveArgs, sqliteTarget.readyPattern, root);
  let stores;
  try {
    stores = await measureAlternating(
      [
        { name: 'SQLite (serve --http)', ...sqliteServer, ...request(sqliteTarget.projectId, sqliteTarget.token) },
        {
          name: 'PostgreSQL (serve --http --role api)',
          child: api.child,
          port: Number(new URL(mcpUrl).port),
          ...request(benchProject.id, token),
        },
      ],
      load,
    );
  } finally {
    await stopChild(sqliteServer.child);
    sqliteTarget.cleanup();
  }
  const [onSqlite, onPostgres] = stores;

  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  process.stdout.write(
    `\nmultinode: 1 API node, workers with ${SLOTS} slots each, lease ${fmt(leaseMs)} ms (PostgreSQL ${(await rows('show server_version'))[0].server_version})\n\n`,
  );
  process.stdout.write('| measure | median | min-max | runs |\n|---|---|---|---|\n');
  process.stdout.write(
    `| SIGKILL -> workflow failed/interrupted | ${fmt(median(interruptedAfter))} ms | ${fmt(Math.min(...interruptedAfter))}-${fmt(Math.max(...interruptedAfter))} ms | ${kills} |\n`,
  );
  process.stdout.write(
    `| SIGKILL -> queued build running on the other worker | ${fmt(median(startedAfter))} ms | ${fmt(Math.min(...startedAfter))}-${fmt(Math.max(...startedAfter))} ms | ${kills} |\n\n`,
  );
  process.stdout.write(
    `| workers | ${builds} scripted builds (steps sleeping ${stepMs} ms, then a published preview) | builds per minute | worker CPU per build |\n|---|---|---|---|\n`,
  );
  process.stdout.write(
    `| 1 | ${one.seconds.toFixed(1)} s | ${fmt(one.perMinute)} | ${fmt(one.workerCpuMsPerBuild)} ms |\n| 2 | ${two.seconds.toFixed(1)} s | ${fmt(two.perMinute)} | ${fmt(two.workerCpuMsPerBuild)} ms |\n\n`,
  );
  process.stdout.write(
    `| svc_get_project, ${load.connections} connections, ${load.rounds} rounds of ${load.seconds} s | req/s | CPU µs/req | p50 ms | p99 ms |\n|---|---|---|---|---|\n`,
  );
  for (const r of stores)
    process.stdout.write(
      `| ${r.name} | ${fmt(r.requestsPerSecond)} | ${r.cpuMicrosPerRequest.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} |\n`,
    );
  const pgRatio = onPostgres.ratioTo(onSqlite);
  process.stdout.write(
    `\nratios: svc_get_project req/s PostgreSQL / SQLite ${pgRatio.requestsPerSecond.toFixed(2)}, server CPU per request ${pgRatio.cpuMicrosPerRequest.toFixed(2)}\n`,
  );
  process.stdout.write(
    `ratios: takeover / lease ${(median(interruptedAfter) / leaseMs).toFixed(2)}; builds per minute, 2 workers / 1 worker ${(two.perMinute / one.perMinute).toFixed(2)}\n`,
  );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'multinode.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        leaseMs,
        takeover: {
          interruptedMs: {
            median: median(interruptedAfter),
            min: Math.min(...interruptedAfter),
            max: Math.max(...interruptedAfter),
          },
          nextStartedMs: {
            median: median(startedAfter),
            min: Math.min(...startedAfter),
            max: Math.max(...startedAfter),
          },
          runs: kills,
        },
        buildsPerMinute: {
          builds,
          stepMs,
          slotsPerWorker: SLOTS,
          oneWorker: one.perMinute,
          twoWorkers: two.perMinute,
          ratio: two.perMinute / one.perMinute,
          workerCpuMsPerBuild: (one.workerCpuMsPerBuild + two.workerCpuMsPerBuild) / 2,
        },
        getProject: {
          sqlite: { requestsPerSecond: onSqlite.requestsPerSecond, cpuMicrosPerRequest: onSqlite.cpuMicrosPerRequest },
          postgres: {
            requestsPerSecond: onPostgres.requestsPerSecond,
            cpuMicrosPerRequest: onPostgres.cpuMicrosPerRequest,
          },
          ratio: pgRatio,
        },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
  await pool?.end();
  await dropDatabase(server.adminUrl, database);
  server.stop();
  rmSync(work, { recursive: true, force: true });
}
