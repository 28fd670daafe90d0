// `npm run bench:tools` (and part of `npm run bench`): the calls an MCP host makes while a build
// runs, on one server, each as a ratio to `svc_get_project`'s server CPU per request measured in
// the same rounds, and `svc_list_projects` against the floor serving the same JSON:
//
// - svc_get_session on an idle project (its last workflow completed; goal: at most 2x
//   svc_get_project's CPU per request) and on a project with 1 running and 50 queued workflows
//   (goal: at most 3x: the queue is one query, not one per queued workflow);
// - svc_get_messages, a page of 100 of 150 messages, against the floor server's route for that
//   call (one prepared read, the same reply byte for byte, which is checked; goal: at most 1.3x),
//   and svc_send_message (a new instruction queued behind a running build, spread over 100
//   projects; the queues are emptied before each run, so every run sends into the same state)
//   against the floor's send (one transaction of the same inserts and updates, the same reply but
//   for its new ids; goal: at most 1.5x); both also reported against svc_get_project;
// - svc_list_projects of a user with 1,000 projects, against the floor server's route for the same
//   call (bench/baselines/floor-server.mjs: node:http, one prepared SQLite read, the same reply
//   byte for byte, which is checked); goal: at most 1.2x its CPU per call.
//
// The running workflows are held by a runner of another host with a lease a day long (rows
// written before the server starts), so nothing runs a build and the queues never move. Each call
// is loaded in turn by autocannon, in alternating order round after round, so that the machine's
// load changes fall on all alike; each ratio is the median of the per-round ratios.
//
// Options (env): BENCH_TOOL_SECONDS (default 3, per call and round), BENCH_TOOL_ROUNDS (default 5:
// the median of five rounds moves less with the machine's load than that of three),
// BENCH_CONNECTIONS (default 32), BENCH_WARMUP_SECONDS (default 1 here), BENCH_SENDS (default 300
// svc_send_message calls per round), BENCH_CPU_PROF (a folder: the servers under test, on SQLite
// and on PostgreSQL, run with `node --cpu-prof` and write their profiles there when they stop, the
// floor server its own in the folder's `floor/`), BENCH_TOOL_CALLS (a comma-separated
// subset of the calls' keys, e.g. `project,sessionIdle`, for profiling one), BENCH_SEND_WARMUP
// (default 3000: svc_send_message calls of each server's warm-up, in runs of BENCH_SENDS),
// BENCH_OURS_FLAGS and BENCH_FLOOR_FLAGS (node options, space-separated, for the SQLite server
// under test and the floor server, e.g. `--trace-gc`; BENCH_CHILD_LOG=<prefix> keeps each server's
// stdout in `<prefix>.<pid>`), BENCH_PER_ROUND (set: each run's CPU per call on stderr, with its
// start and end in Unix ms).
//
// A run of svc_send_message ends at its last answer: autocannon takes at least a second for any
// fixed count of calls, and the server's CPU is read when the last one is answered, so that its
// idle timers over the rest of that second are not counted as the calls' cost (nor, for either
// server, what the calls left to finish after it, such as a garbage collector's sweep).
//
// svc_get_project is also loaded on a second server of the same build on PostgreSQL, in the same
// rounds, its CPU per call (the node's and, on a throwaway cluster, the cluster's processes
// together) as a ratio to the SQLite server's (goal: at most 1.5x): on SVC_BENCH_DATABASE_URL (an empty
// database) when it is set, else on a database of the server bench/postgres.mjs provides
// (BENCH_DATABASE_URL, or a throwaway cluster of the installed PostgreSQL). When there is none, or
// that server cannot be prepared, the reason is printed instead.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTicks, prepareTarget, seedRows, startChild, stopChild } from './http-target.mjs';
import { createDatabase, dropDatabase, startPostgres } from './postgres.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.BENCH_TOOL_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_TOOL_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const sends = Number(process.env.BENCH_SENDS ?? 300);
const sendWarmup = Number(process.env.BENCH_SEND_WARMUP ?? 3000);
const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const QUEUED = 50;
const LISTED_PROJECTS = 1000;
const MESSAGES = 150;
const SINKS = 100;

const target = await prepareTarget(root);
const dbFile = join(target.dataDir, 'mobile-builder.db');
const listerToken = target.cli('token', 'create', '--user', 'lister').stdout.trim().split('\n').at(-1);
target.cli('user', 'set-plan', 'lister', 'bench', '--plans', target.plans);
const seeded = seed(dbFile);

/** The node options in env variable `name`, space-separated (none when unset). */
const nodeFlags = (name) => process.env[name]?.split(' ').filter(Boolean) ?? [];
const call = (name, args) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const headersOf = (token) => ({ ...target.headers, authorization: `Bearer ${token}` });
let sent = 0;
/** Removes the PostgreSQL server's data dir, once it has one. */
let postgresCleanup;
const sinkDb = new Database(dbFile);
sinkDb.pragma('foreign_keys = ON');
sinkDb.pragma('busy_timeout = 5000');
const clearSinks = sinkDb.prepare(
  `DELETE FROM workflows WHERE status = 'queued' AND project_id IN (${seeded.sinks.map(() => '?').join(', ')})`,
);

const servers = {};
const side = [];
let report;
try {
  servers.ours = await startChild(
    [...profile, ...nodeFlags('BENCH_OURS_FLAGS'), ...target.serveArgs],
    target.readyPattern,
    root,
  );
  const floorProfile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_CPU_PROF, 'floor')}`]
    : [];
  servers.floor = await startChild(
    [
      ...floorProfile,
      ...nodeFlags('BENCH_FLOOR_FLAGS'),
      join(root, 'bench/baselines/floor-server.mjs'),
      dbFile,
      seeded.listerId,
    ],
    /PORT=(\d+)/,
  );
  side.push(servers.ours.child, servers.floor.child);
  const calls = [
    { key: 'project', name: 'svc_get_project', server: servers.ours, headers: target.headers, body: target.body },
    {
      key: 'sessionIdle',
      name: 'svc_get_session, idle (1 workflow done)',
      server: servers.ours,
      headers: target.headers,
      body: call('svc_get_session', { projectId: seeded.idle }),
      goal: 2,
    },
    {
      key: 'sessionQueued',
      name: `svc_get_session, 1 running + ${QUEUED} queued`,
      server: servers.ours,
      headers: target.headers,
      body: call('svc_get_session', { projectId: seeded.busy }),
      goal: 3,
    },
    {
      key: 'messages',
      name: `svc_get_messages, limit 100 (of ${MESSAGES})`,
      server: servers.ours,
      headers: target.headers,
      body: call('svc_get_messages', { projectId: seeded.chat, limit: 100 }),
    },
    {
      key: 'floorMessages',
      name: 'floor: svc_get_messages, 1 SQLite read',
      server: servers.floor,
      headers: target.headers,
      body: call('svc_get_messages', { projectId: seeded.chat, limit: 100 }),
    },
    {
      key: 'send',
      name: 'svc_send_message, queued behind a build',
      server: servers.ours,
      headers: target.headers,
      body: sendBody(),
      nextBody: sendBody,
      before: emptySinkQueues,
    },
    {
      key: 'floorSend',
      name: 'floor: svc_send_message, 1 transaction',
      server: servers.floor,
      headers: target.headers,
      body: sendBody(),
      nextBody: sendBody,
      before: emptySinkQueues,
    },
    {
      key: 'list',
      name: `svc_list_projects, ${LISTED_PROJECTS} projects`,
      server: servers.ours,
      headers: headersOf(listerToken),
      body: call('svc_list_projects', {}),
    },
    {
      key: 'floorList',
      name: 'floor: svc_list_projects, 1 SQLite read',
      server: servers.floor,
      headers: headersOf(listerToken),
      body: call('svc_list_projects', {}),
    },
  ];
  const pg = await postgresTarget();
  if (pg.server) {
    side.push(pg.server.child);
    calls.push({
      key: 'projectPg',
      name: 'svc_get_project on PostgreSQL',
      server: pg.server,
      headers: pg.target.headers,
      body: pg.target.body,
      // Goal 1 of round three: the node's CPU and the database server's together.
      extraTicks: pg.serverTicks,
      goal: pg.serverTicks ? 1.5 : undefined,
    });
  }
  report = {
    postgres: pg.skipped
      ? `not measured: ${pg.skipped}`
      : `measured on ${pg.how}, ${pg.serverTicks ? "the node's and the cluster's CPU together" : "the node's CPU only (a given server's is not measured)"}`,
    postgresCpuIncluded: Boolean(pg.serverTicks),
  };
  await checkReplies(calls);
  const only = process.env.BENCH_TOOL_CALLS?.split(',');
  if (only) calls.splice(0, calls.length, ...calls.filter((c) => only.includes(c.key)));
  console.error(
    `benchmark: the polled calls on one server, ${connections} connections, ${rounds} alternating rounds of ${seconds}s per call (svc_send_message: ${sends} calls per round) after ${warmup}s of warm-up`,
  );
  const runs = new Map(calls.map((c) => [c.key, []]));
  // A call of a fixed count (svc_send_message) warms up over BENCH_SEND_WARMUP calls, about what a
  // polled call gets in its warm-up second: after one run of 300 the JIT still compiled the send's
  // path, and the first measured round of ours cost twice the next ones.
  for (const c of calls) {
    if (!c.nextBody) await run(c, warmup);
    else for (let n = 0; n < sendWarmup; n += sends) await run(c, warmup);
  }
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? calls : [...calls].reverse();
    for (const c of order) runs.get(c.key).push(await run(c, seconds));
  }
  report = { ...report, ...summarise(calls, runs) };
} finally {
  for (const child of side) await stopChild(child);
  await postgresCleanup?.();
  sinkDb.close();
  target.cleanup();
}

const pad = (s, n) => String(s).padEnd(n);
const BASES_SHOWN = { list: 'list', messages: 'page', send: 'send' };
const verdict = (ratio, goal) => (goal === undefined ? '' : `goal <= ${goal}x: ${ratio <= goal ? 'ok' : 'short'}`);
console.log(
  `\n${pad('call', 48)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('CPU µs/call', 13)}${pad('CPU ratio', 26)}goal`,
);
for (const r of report.calls) {
  const base = r.key.startsWith('floor')
    ? ''
    : BASES_SHOWN[r.key]
      ? `${r.cpuRatio.toFixed(2)}x the floor's ${BASES_SHOWN[r.key]}`
      : r.key === 'project'
        ? '1 (the baseline)'
        : r.key === 'projectPg'
          ? `${r.cpuRatio.toFixed(2)}x on SQLite`
          : `${r.cpuRatio.toFixed(2)}x svc_get_project`;
  console.log(
    `${pad(r.name, 48)}${pad(r.requestsPerSecond.toFixed(0), 9)}${pad(r.p50Ms, 8)}${pad(r.p99Ms, 8)}${pad(r.cpuMicrosPerCall.toFixed(1), 13)}${pad(base, 26)}${verdict(r.cpuRatio, r.goal)}`,
  );
}
console.log(`svc_get_project on PostgreSQL: ${report.postgres}`);
for (const [what, same, how] of [
  ['svc_list_projects', report.sameListReply, 'byte for byte'],
  ['svc_get_messages', report.sameMessagesReply, 'byte for byte'],
  ['svc_send_message', report.sameSendReply, 'but for its new ids and queue position'],
])
  console.log(
    `the floor's ${what} reply ${same ? `equals ours, ${how}` : 'differs from ours: its figures are not comparable'}`,
  );
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'tools.json'),
  `${JSON.stringify({ date: new Date().toISOString(), seconds, rounds, connections, sends, ...report }, null, 2)}\n`,
);
if (!report.sameListReply || !report.sameMessagesReply || !report.sameSendReply) process.exitCode = 1;

/**
 * A second server of this build on PostgreSQL, prepared like the SQLite one (user `bench`, its
 * token, project `Bench`): on the empty database SVC_BENCH_DATABASE_URL when it is set, else on a
 * new database of the server bench/postgres.mjs finds or starts (a throwaway cluster by default).
 * @returns `{ target, server, how }`, or `{ skipped: reason }` when there is no PostgreSQL or the
 *   server cannot be prepared.
 */
async function postgresTarget() {
  let url = process.env.SVC_BENCH_DATABASE_URL;
  let how = 'SVC_BENCH_DATABASE_URL';
  let serverTicks;
  const cleanups = [];
  postgresCleanup = async () => {
    for (const clean of cleanups.reverse()) await clean();
  };
  try {
    if (!url) {
      const server = await startPostgres();
      if (server.skipped) return { skipped: server.skipped };
      cleanups.push(server.stop);
      url = await createDatabase(server.adminUrl, 'mbm_bench_tools');
      cleanups.push(() => dropDatabase(server.adminUrl, 'mbm_bench_tools'));
      how = server.how;
      serverTicks = server.cpuTicks;
    }
    const pgTarget = await prepareTarget(root, { storeArgs: ['--database-url', url] });
    cleanups.push(pgTarget.cleanup);
    return {
      target: pgTarget,
      server: await startChild([...profile, ...pgTarget.serveArgs], pgTarget.readyPattern, root),
      how,
      serverTicks,
    };
  } catch (error) {
    return { skipped: String(error.message ?? error).split('\n')[0] };
  }
}

/** The next svc_send_message call: a new instruction to the next sink project (each has a running build, so it queues). */
function sendBody() {
  const projectId = seeded.sinks[sent++ % seeded.sinks.length];
  return call('svc_send_message', { projectId, message: 'Add a settings screen', kind: 'build' });
}

/** Deletes the workflows svc_send_message queued, so that every run starts from the same queues. @returns how many there were. */
function emptySinkQueues() {
  return clearSinks.run(...seeded.sinks).changes;
}

/**
 * Loads one call for `duration` seconds (svc_send_message: `sends` calls) and measures the server's
 * CPU over it. @throws when a request failed, or a send was not queued.
 */
async function run(c, duration) {
  if (c.before) c.before();
  const opts = {
    url: `http://127.0.0.1:${c.server.port}/mcp`,
    method: 'POST',
    headers: c.headers,
    connections,
    pipelining: 1,
  };
  if (c.nextBody)
    Object.assign(opts, { amount: sends, requests: [{ setupRequest: (req) => ({ ...req, body: c.nextBody() }) }] });
  else Object.assign(opts, { body: c.body, duration });
  const ticksNow = () => cpuTicks(c.server.child.pid) + (c.extraTicks?.() ?? 0);
  const ticks = ticksNow();
  const started = Date.now();
  const load = autocannon(opts);
  // A run of a fixed count of calls ends at its last answer (see the file comment).
  let ticksAtLast;
  let answered = 0;
  if (c.nextBody) load.on('response', () => ++answered === sends && (ticksAtLast = ticksNow()));
  const r = await load;
  const cpuMicrosPerCall = (((ticksAtLast ?? ticksNow()) - ticks) * 10_000) / Math.max(1, r.requests.total);
  const errors = r.errors + r.timeouts + r.non2xx;
  if (errors > 0) throw new Error(`${c.name}: ${errors} requests failed`);
  if (c.before) {
    const queued = c.before();
    if (queued !== r.requests.total)
      throw new Error(`${c.name}: ${queued} of ${r.requests.total} calls queued a workflow`);
  }
  if (process.env.BENCH_PER_ROUND)
    console.error(`round ${c.key} ${cpuMicrosPerCall.toFixed(1)} ${started} ${Date.now()}`);
  return { requestsPerSecond: r.requests.average, cpuMicrosPerCall, p50Ms: r.latency.p50, p99Ms: r.latency.p99 };
}

/** Calls each once and checks its answer is a tool result (not an error); compares the floor's list with ours. */
async function checkReplies(calls) {
  const replies = {};
  for (const c of calls) {
    const text = await fetch(`http://127.0.0.1:${c.server.port}/mcp`, {
      method: 'POST',
      headers: c.headers,
      body: c.body,
    }).then((r) => r.text());
    const reply = JSON.parse(text);
    if (!reply.result || reply.result.isError) throw new Error(`${c.name}: not a result: ${text.slice(0, 500)}`);
    replies[c.key] = text;
  }
  if (JSON.parse(replies.sessionQueued).result.structuredContent.queuedWorkflows.length !== QUEUED)
    throw new Error('the busy project does not have its queue');
  if (JSON.parse(replies.list).result.structuredContent.projects.length !== LISTED_PROJECTS)
    throw new Error('the lister does not have its projects');
  emptySinkQueues();
  calls.sameListReply = replies.list === replies.floorList;
  calls.sameMessagesReply = replies.messages === replies.floorMessages;
  // A send's ids are new and its queue position grows: the rest of the reply must be the same.
  const sendShape = (text) =>
    text
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID')
      .replace(/(queuePosition\\?":)\d+/g, '$1N');
  calls.sameSendReply = sendShape(replies.send) === sendShape(replies.floorSend);
}

/** The median of a list of numbers. */
function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Medians per call, and each call's CPU per call as the median of its per-round ratios to its baseline's. */
function summarise(calls, runs) {
  const ratio = (key, baseKey) =>
    runs.has(baseKey)
      ? median(runs.get(key).map((r, i) => r.cpuMicrosPerCall / runs.get(baseKey)[i].cpuMicrosPerCall))
      : Number.NaN;
  const BASES = { list: 'floorList', messages: 'floorMessages', send: 'floorSend' };
  const GOALS = { list: 1.2, messages: 1.3, send: 1.5 };
  return {
    sameListReply: calls.sameListReply,
    sameMessagesReply: calls.sameMessagesReply,
    sameSendReply: calls.sameSendReply,
    calls: calls.map((c) => {
      const mine = runs.get(c.key);
      const baseKey = BASES[c.key] ?? (c.key.startsWith('floor') ? c.key : 'project');
      return {
        key: c.key,
        name: c.name,
        requestsPerSecond: median(mine.map((r) => r.requestsPerSecond)),
        p50Ms: median(mine.map((r) => r.p50Ms)),
        p99Ms: median(mine.map((r) => r.p99Ms)),
        cpuMicrosPerCall: median(mine.map((r) => r.cpuMicrosPerCall)),
        baseline: baseKey,
        cpuRatio: ratio(c.key, baseKey),
        cpuRatioToProject: ratio(c.key, 'project'),
        goal: GOALS[c.key] ?? c.goal,
        rounds: mine,
      };
    }),
  };
}

/**
 * Writes the bench's data before the server starts: user `bench`'s projects Idle (one completed
 * workflow), Busy (one running, 50 queued), Chat (150 messages) and 100 sink projects (one running
 * each), and user `lister`'s 1,000 projects.
 * @returns their ids and the lister's user id.
 */
function seed(file) {
  const db = new Database(file);
  db.pragma('foreign_keys = ON');
  const userId = (name) => db.prepare('SELECT id FROM users WHERE name = ?').get(name).id;
  const bench = userId('bench');
  const listerId = userId('lister');
  const { newProject, newWorkflow, at } = seedRows(db);
  const message = db.prepare(
    "INSERT INTO messages (id, project_id, seq, role, type, content, workflow_id, created_at) VALUES (?, ?, ?, ?, 'progress', ?, ?, ?)",
  );
  const ids = db.transaction(() => {
    const idle = newProject(bench, 'Idle', 5000);
    newWorkflow(idle, 'completed', 'Build a todo list app');
    const busy = newProject(bench, 'Busy', 4000);
    newWorkflow(busy, 'running', 'Build a weather app');
    for (let i = 1; i <= QUEUED; i++) newWorkflow(busy, 'queued', `Queued change ${i}: add screen ${i}`);
    const chat = newProject(bench, 'Chat', 3000);
    const chatWorkflow = newWorkflow(chat, 'completed', 'Build a chat app');
    for (let i = 1; i <= MESSAGES; i++)
      message.run(
        randomUUID(),
        chat,
        i,
        i % 10 === 1 ? 'user' : 'agent',
        `Step ${i}: wrote src/screens/Screen${i}.tsx and checked its types`,
        chatWorkflow,
        at(MESSAGES - i),
      );
    db.prepare('UPDATE projects SET message_seq = ? WHERE id = ?').run(MESSAGES, chat);
    const sinks = [];
    for (let i = 0; i < SINKS; i++) {
      const sink = newProject(bench, `Sink ${i}`, 2000);
      newWorkflow(sink, 'running', 'Build a long app');
      sinks.push(sink);
    }
    for (let i = 0; i < LISTED_PROJECTS; i++) newProject(listerId, `Project ${i}`, LISTED_PROJECTS - i);
    return { idle, busy, chat, sinks };
  })();
  db.close();
  return { ...ids, listerId };
}
