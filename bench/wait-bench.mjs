// `npm run bench:waits` (and part of `npm run bench`): what open `svc_get_session` waits cost the
// server's memory (docs/performance.md "Round three", goal 6: 1,000 open waits, one user each,
// at most 64 MiB of RSS above the idle server, and every one answers).
//
// One server of this build (`serve --http` on port 0, SQLite, the scripted builder) on a data dir
// seeded before it starts: 1,000 users on the bench plan (no practical rate limit), each with an
// API token and one project whose build is running, held by a runner of another host with a lease
// a day long (so nothing changes and every wait runs to its end). The server runs with
// `--max-concurrent-requests` above the waits (each open wait holds a request slot; the default
// is 256, docs/contract.md "Limits and plans") and `--trust-proxy loopback` (the bench is one peer
// address: past 512 open connections a peer keeps at most 128 unless it is a trusted proxy).
//
// After a warm-up (a few short waits, then 3 s of svc_get_project load of the bench user, as any
// server in use has had), the server's RSS (VmRSS of /proc/<pid>/status) is read idle (and before
// that load, reported beside the figure); then every user opens one `tools/call svc_get_session {projectId, waitSeconds}` with a
// progress token, each on its own connection (node:http, `Accept: application/json,
// text/event-stream`), so that each reply turns into an SSE stream whose first event is the wait's
// first progress notification. A wait is open once that event has come; with all of them open
// the server's RSS is read again, every 250 ms until a second before the first wait is due to end
// (the largest read is the figure), then every stream must end with a JSON-RPC result whose
// `wait.reason` is `time_up`.
//
// Options (env): BENCH_WAITS (default 1000), BENCH_WAIT_SECONDS (default 30: long enough for every
// wait to be open before the first ends on a loaded machine), BENCH_NODE_FLAGS (space-separated
// node flags for the server, to see what the memory is: `--max-semi-space-size=1`,
// `--heapsnapshot-signal=SIGUSR2`, `--require` of a file that logs `v8.getHeapSpaceStatistics()`;
// the server's own output is not shown).
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { load, prepareTarget, seedRows, startChild, stopChild } from './http-target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WAITS = Number(process.env.BENCH_WAITS ?? 1000);
const WAIT_SECONDS = Number(process.env.BENCH_WAIT_SECONDS ?? 30);
const WARMUP_WAITS = 20;
const LOAD_SECONDS = 3;
const GOAL_MIB = 64;
const { generateToken, hashToken, displayPrefix } = await import(
  pathToFileURL(join(root, 'dist', 'auth', 'api-token.js')).href
);

/** VmRSS of process `pid`, in MiB. */
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

const target = await prepareTarget(root);
const waiters = seed(join(target.dataDir, 'mobile-builder.db'));
let server;
let report;
try {
  server = await startChild(
    [
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      ...target.serveArgs,
      '--max-concurrent-requests',
      String(WAITS + 64),
      '--trust-proxy',
      'loopback',
    ],
    target.readyPattern,
    root,
  );
  const pid = server.child.pid;
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  // Warm-up: the code paths of a wait, on a few users, then a moment for the server to settle.
  const warm = await Promise.all(waiters.slice(0, WARMUP_WAITS).map((w, i) => openWait(server.port, agent, w, 1, i)));
  if (warm.some((w) => !w.ok)) throw new Error(`warm-up waits failed: ${JSON.stringify(warm.find((w) => !w.ok))}`);
  agent.destroy();
  await sleep(2000);
  const coldIdle = Math.max(rssMiB(pid), ...(await samples(pid)));
  // Then load, as any server in use has had: svc_get_project of the bench user for a few seconds
  // (no waiter's token or session is read), and idle again: the idle server of the goal.
  await load(server.port, pid, target.headers, target.body, { seconds: LOAD_SECONDS, connections: 32 });
  await sleep(2000);
  const idle = Math.max(rssMiB(pid), ...(await samples(pid)));
  console.error(
    `benchmark: ${WAITS} open svc_get_session waits of ${WAIT_SECONDS} s, one user each; idle RSS ${coldIdle.toFixed(1)} MiB before any load, ${idle.toFixed(1)} MiB after ${LOAD_SECONDS} s of svc_get_project`,
  );

  const waitAgent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const started = Date.now();
  let opened = 0;
  let allOpen;
  const allOpened = new Promise((resolve) => (allOpen = resolve));
  const calls = waiters.map((w, i) =>
    openWait(server.port, waitAgent, w, WAIT_SECONDS, i, () => {
      if (++opened === WAITS) allOpen();
    }),
  );
  const ended = Promise.all(calls);
  // Every wait open (its first progress event came), or the first of them ended: then read RSS.
  await Promise.race([allOpened, Promise.race(calls)]);
  const openMs = Date.now() - started;
  const openCount = opened;
  const open = Math.max(...(await samples(pid)));
  // Then while they stay open (their heartbeats come every 10 s), until a second before the first
  // is due to end or one has ended: the largest read is the figure.
  let firstEnded = false;
  void Promise.race(calls).then(() => (firstEnded = true));
  let held = open;
  while (!firstEnded && Date.now() < started + WAIT_SECONDS * 1000 - 1000) {
    held = Math.max(held, rssMiB(pid));
    await sleep(250);
  }
  const results = await ended;
  waitAgent.destroy();
  const answered = results.filter((r) => r.ok).length;
  const reasons = {};
  for (const r of results) reasons[r.reason ?? r.error] = (reasons[r.reason ?? r.error] ?? 0) + 1;
  report = {
    waits: WAITS,
    waitSeconds: WAIT_SECONDS,
    openAtOnce: openCount,
    allOpenAfterMs: openMs,
    answered,
    reasons,
    coldIdleRssMiB: coldIdle,
    idleRssMiB: idle,
    aboveColdIdleMiB: held - coldIdle,
    openRssMiB: open,
    heldRssMiB: held,
    aboveIdleMiB: held - idle,
    perWaitKiB: openCount > 0 ? ((held - idle) * 1024) / openCount : undefined,
    peakRssMiB: Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024,
    goalMiB: GOAL_MIB,
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
  };
} finally {
  if (server) await stopChild(server.child);
  target.cleanup();
}

console.log(
  `\n${report.openAtOnce} of ${report.waits} svc_get_session waits open at once (after ${report.allOpenAfterMs} ms), ${report.answered} answered with a result (${Object.entries(
    report.reasons,
  )
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')})`,
);
console.log(
  `server RSS: idle ${report.idleRssMiB.toFixed(1)} MiB (${report.coldIdleRssMiB.toFixed(1)} before any load), once all were open ${report.openRssMiB.toFixed(1)} MiB, at most ${report.heldRssMiB.toFixed(1)} MiB while they stayed open: ${report.aboveIdleMiB.toFixed(1)} MiB above idle (${report.perWaitKiB?.toFixed(1)} KiB per wait; ${report.aboveColdIdleMiB.toFixed(1)} MiB above the idle server before any load; goal <= ${GOAL_MIB} MiB: ${report.aboveIdleMiB <= GOAL_MIB && report.answered === WAITS ? 'ok' : 'short'}); peak ${report.peakRssMiB.toFixed(1)} MiB; load ${report.loadAverage.join(' ')}`,
);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'waits.json'),
  `${JSON.stringify({ date: new Date().toISOString(), ...report }, null, 2)}\n`,
);
if (report.answered !== WAITS || report.openAtOnce !== WAITS) process.exitCode = 1;

/** Five reads of the server's RSS over a second, in MiB. */
async function samples(pid) {
  const seen = [];
  for (let i = 0; i < 5; i++) {
    seen.push(rssMiB(pid));
    await sleep(200);
  }
  return seen;
}

/**
 * One `svc_get_session` wait of `waiter` over its own connection, with a progress token, read as
 * an SSE stream; `onOpen` is called at its first progress notification.
 * @returns `{ ok: true, reason }` (the answer's `wait.reason`) for a JSON-RPC result, else
 *   `{ ok: false, error }` (the HTTP status, or the body of a refusal).
 */
function openWait(port, agent, waiter, waitSeconds, i, onOpen = () => undefined) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: {
      name: 'svc_get_session',
      arguments: { projectId: waiter.projectId, waitSeconds },
      _meta: { progressToken: `wait-${i}` },
    },
  });
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${waiter.token}`,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        let seenProgress = false;
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
          if (!seenProgress && text.includes('notifications/progress')) {
            seenProgress = true;
            onOpen();
          }
        });
        res.on('end', () => {
          const events = text
            .split('\n\n')
            .map((e) => /^data: (.*)$/m.exec(e)?.[1])
            .filter(Boolean);
          const last = res.headers['content-type']?.startsWith('text/event-stream') ? events.at(-1) : text;
          let reply;
          try {
            reply = JSON.parse(last ?? '');
          } catch {
            return resolve({ ok: false, error: `HTTP ${res.statusCode}: ${text.slice(0, 200)}` });
          }
          const wait = reply.result?.structuredContent?.wait;
          if (reply.id !== i + 1 || !reply.result || reply.result.isError || !wait)
            return resolve({ ok: false, error: `HTTP ${res.statusCode}: ${text.slice(0, 200)}` });
          resolve({ ok: true, reason: wait.reason, streamed: seenProgress });
        });
        res.on('error', (error) => resolve({ ok: false, error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ ok: false, error: error.code ?? error.message }));
    req.end(body);
  });
}

/**
 * Writes the waiters before the server starts: per waiter a user on the bench plan, an API token
 * (stored as its SHA-256, as `token create` does) and a project with a running build.
 * @returns `{ token, projectId }` per waiter.
 */
function seed(file) {
  const db = new Database(file);
  db.pragma('foreign_keys = ON');
  const { newProject, newWorkflow, at } = seedRows(db);
  const user = db.prepare('INSERT INTO users (id, name, plan, created_at) VALUES (?, ?, ?, ?)');
  const token = db.prepare(
    'INSERT INTO api_tokens (id, user_id, token_hash, display_prefix, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const waiters = db.transaction(() =>
    Array.from({ length: WAITS }, (_, i) => {
      const userId = randomUUID();
      user.run(userId, `waiter-${i}`, 'bench', at(60_000));
      const secret = generateToken();
      token.run(randomUUID(), userId, hashToken(secret), displayPrefix(secret), at(60_000));
      const projectId = newProject(userId, `Waits ${i}`, 60_000);
      newWorkflow(projectId, 'running', 'Build an app that takes its time');
      return { token: secret, projectId };
    }),
  )();
  db.close();
  return waiters;
}
