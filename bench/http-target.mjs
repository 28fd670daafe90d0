// What the HTTP benchmarks share: one build's server prepared for `svc_get_project` (a data dir
// with a bench user on a plan without a practical rate limit, its token and one project), child
// servers started on port 0, a measured autocannon load, and the server's CPU per request read
// from /proc (Linux).
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Spawns `node args...` and resolves once its output matches `readyPattern` (whose first group is
 * the port). Rejects when it exits first or does not start within 20 s.
 * @returns the child and the port.
 */
export function startChild(args, readyPattern, cwd = process.cwd()) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d.toString();
      const m = readyPattern.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // BENCH_CHILD_LOG=<prefix>: the server's stdout (a `--trace-gc` log, say) kept in `<prefix>.<pid>`.
    const log = process.env.BENCH_CHILD_LOG;
    if (log) child.stdout.on('data', (d) => appendFileSync(`${log}.${child.pid}`, d));
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
    setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000).unref();
  });
}

/** Stops a child started by `startChild` and waits for it to exit. */
export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * CPU time (user + system) process `pid` has used, in clock ticks (10 ms each on Linux), to the
 * nanosecond: the sum of its threads' run time in `/proc/<pid>/task/<tid>/schedstat` (the
 * process's `stat` counts whole ticks only, which moved a call's figure by a fifth when a round
 * used 15 of them). A thread that ended is no longer counted, so this is for long-lived servers.
 */
export function cpuTicks(pid) {
  let nanos = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanos += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nanos / 10_000_000;
}

/**
 * What process `pid` costs while nobody calls it, over `seconds`: its CPU in ms per second
 * (`cpuTicks`) and its main thread's wake-ups per second (voluntary context switches: each timer
 * that fires wakes the event loop once). @returns `{ cpuMsPerSecond, wakeupsPerSecond }`
 */
export async function idleCost(pid, seconds) {
  const wakeups = () =>
    Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  const [ticks, woken] = [cpuTicks(pid), wakeups()];
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return {
    cpuMsPerSecond: ((cpuTicks(pid) - ticks) * 10) / seconds,
    wakeupsPerSecond: (wakeups() - woken) / seconds,
  };
}

/** Peak resident memory of process `pid`, in MiB. */
export function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/**
 * Loads `POST /mcp` on `port` with autocannon for `seconds` (after `warmup` seconds unmeasured) and
 * measures the server's CPU over the measured part.
 * @returns autocannon's result plus `cpuMicrosPerRequest` (server CPU µs per answered request).
 */
export async function load(port, pid, headers, body, { seconds, warmup = 0, connections }) {
  const opts = { url: `http://127.0.0.1:${port}/mcp`, method: 'POST', headers, body, connections, pipelining: 1 };
  if (warmup > 0) await autocannon({ ...opts, duration: warmup });
  const before = cpuTicks(pid);
  const result = await autocannon({ ...opts, duration: seconds });
  result.cpuMicrosPerRequest = ((cpuTicks(pid) - before) * 10_000) / Math.max(1, result.requests.total);
  return result;
}

/**
 * Prepares build `root` (a checkout with `bin/` and a built `dist/`) for the benchmark: a fresh data
 * dir, user `bench` with a token and plan `bench` (no practical rate limit nor queue bound), and
 * one project `Bench` created through a short-lived server of that build.
 * @returns the data dir, the `svc_get_project` request (`body`, `headers`), `serveArgs` (the node
 *   arguments of `serve --http` on port 0), `readyPattern`, `cli(...args)` (runs a command of the
 *   build on the data dir; `plans` is the plans file), and `cleanup()` (removes the data dir).
 * @param storeArgs arguments naming the store for every command, e.g. `['--database-url', url]`
 *   (default: the data dir's SQLite file).
 */
export async function prepareTarget(root, { storeArgs = [] } = {}) {
  const bin = join(root, 'bin', 'mobile-builder-mcp.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'mbm-bench-'));
  const plans = join(dataDir, 'plans.json');
  writeFileSync(
    plans,
    JSON.stringify({
      bench: {
        requestsPerMinute: 1_000_000_000,
        projectCreationsPerHour: 10,
        maxProjects: 10,
        maxQueuedWorkflows: 1_000_000_000,
      },
    }),
  );
  const cli = (...args) =>
    spawnSync(process.execPath, [bin, ...args, '--data-dir', dataDir, ...storeArgs], { encoding: 'utf8' });
  const token = cli('token', 'create', '--user', 'bench').stdout.trim().split('\n').at(-1);
  cli('user', 'set-plan', 'bench', 'bench', '--plans', plans);
  const serveArgs = [
    bin,
    'serve',
    '--http',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    ...storeArgs,
    '--plans',
    plans,
    '--log-level',
    'warn',
  ];
  const readyPattern = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

  let projectId;
  try {
    const setup = await startChild(serveArgs, readyPattern, root);
    const created = await fetch(`http://127.0.0.1:${setup.port}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_create_project', arguments: { name: 'Bench' } },
      }),
    }).then((r) => r.json());
    await stopChild(setup.child);
    projectId = created.result.structuredContent.id;
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  return {
    root,
    dataDir,
    token,
    projectId,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_get_project', arguments: { projectId } },
    }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    serveArgs,
    readyPattern,
    cli,
    plans,
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Loads running servers in alternating rounds (A B, then B A, ...), so that a change of the
 * machine's load falls on all of them: the way to compare two servers on a shared machine.
 * @param servers `{ name, child, port, headers, body }` each, already started.
 * @returns per server: the median req/s and CPU µs per request over the rounds, each round's
 *   figures, and `ratioTo(other)`: the median over the rounds of this server's req/s and CPU per
 *   request divided by `other`'s in the same round.
 * @throws when a request fails.
 */
export async function measureAlternating(servers, { rounds, seconds, warmup, connections }) {
  const runs = new Map(servers.map((s) => [s, []]));
  const run = async (server, duration) => {
    const r = await load(server.port, server.child.pid, server.headers, server.body, {
      seconds: duration,
      connections,
    });
    const errors = r.errors + r.timeouts + r.non2xx;
    if (errors > 0) throw new Error(`${server.name}: ${errors} requests failed`);
    return {
      requestsPerSecond: r.requests.average,
      cpuMicrosPerRequest: r.cpuMicrosPerRequest,
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
    };
  };
  if (warmup > 0) for (const server of servers) await run(server, warmup);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) runs.get(server).push(await run(server, seconds));
  }
  return servers.map((server) => {
    const mine = runs.get(server);
    return {
      name: server.name,
      rounds: mine,
      requestsPerSecond: median(mine.map((r) => r.requestsPerSecond)),
      cpuMicrosPerRequest: median(mine.map((r) => r.cpuMicrosPerRequest)),
      p50Ms: median(mine.map((r) => r.p50Ms)),
      p99Ms: median(mine.map((r) => r.p99Ms)),
      ratioTo: (other) => {
        const theirs = runs.get(servers.find((s) => s.name === other.name));
        return {
          requestsPerSecond: median(mine.map((r, i) => r.requestsPerSecond / theirs[i].requestsPerSecond)),
          cpuMicrosPerRequest: median(mine.map((r, i) => r.cpuMicrosPerRequest / theirs[i].cpuMicrosPerRequest)),
        };
      },
    };
  });
}

/** A runner of another host: a server under test never takes its workflows over while their lease lasts. */
export const PHANTOM_RUNNER = 'bench-phantom-host:1:bench';

/**
 * Row writers for seeding a data dir's SQLite file (open `db`, `foreign_keys` on) before its server
 * starts: `newProject(ownerId, name, msAgo)` and `newWorkflow(projectId, status, instruction)` (a
 * build; a running one is held by `PHANTOM_RUNNER` with a lease a day long, so no build ever runs
 * and its project's waits see no change). Each returns the new row's id.
 */
export function seedRows(db) {
  const now = Date.now();
  const at = (msAgo) => new Date(now - msAgo).toISOString();
  let seq = db.prepare('SELECT coalesce(max(seq), 0) AS m FROM workflows').get().m;
  const project = db.prepare(
    'INSERT INTO projects (id, owner_id, name, description, visibility, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const workflow = db.prepare(
    `INSERT INTO workflows (id, project_id, seq, kind, status, instruction, step_index, step_total, step_name, runner_id, lease_expires_at, created_at, started_at, finished_at)
     VALUES (@id, @projectId, @seq, 'build', @status, @instruction, @stepIndex, 4, @stepName, @runnerId, @leaseExpiresAt, @createdAt, @startedAt, @finishedAt)`,
  );
  const newProject = (owner, name, msAgo) => {
    const id = randomUUID();
    project.run(id, owner, name, `${name}: a bench project`, 'private', at(msAgo), at(msAgo));
    return id;
  };
  const newWorkflow = (projectId, status, instruction) => {
    const id = randomUUID();
    const running = status === 'running';
    workflow.run({
      id,
      projectId,
      seq: ++seq,
      status,
      instruction,
      stepIndex: status === 'queued' ? 0 : running ? 2 : 4,
      stepName: status === 'queued' ? null : 'Bundling the app',
      runnerId: running ? PHANTOM_RUNNER : null,
      leaseExpiresAt: running ? now + 86_400_000 : null,
      createdAt: at(60_000),
      startedAt: status === 'queued' ? null : at(50_000),
      finishedAt: status === 'completed' ? at(10_000) : null,
    });
    return id;
  };
  return { newProject, newWorkflow, at };
}
