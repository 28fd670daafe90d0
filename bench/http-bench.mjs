// `npm run bench`, four parts, each against baselines measured in the same run (figures are
// relative: the machine is shared and noisy, so only the ratios within one run mean much):
//
// 1. svc_get_project over HTTP under autocannon, against four baselines: a bare node:http server,
//    the floor (node:http, one prepared SQLite read of the project row and the same reply bytes as
//    ours; issue goal: ours at most 1.15x its CPU per request and at least 0.9x its req/s), the
//    SDK's stock stateless server (a server per request), and a long-lived SDK McpServer (one
//    server and transport reused, stateful JSON mode). Requests/s, p50/p99 latency, peak RSS and
//    server CPU per request of each, in one table, and the ratios. Ours, the floor and the bare
//    server run side by side and are loaded in alternating rounds (medians; a goal's ratio is the
//    median of the per-round ratios), so that the shared machine's load falls on all three alike.
// 2. What ours and the floor cost idle after the rounds (CPU ms and event-loop wake-ups per second,
//    over BENCH_IDLE_SECONDS, default 10): timers that fire while nobody calls.
// 3. The request limiter: cost of counting one request in process memory and in the store
//    (shared by every process on the data dir).
//
// Options (env): BENCH_SECONDS (default 5, per round and server), BENCH_ROUNDS (default 5 rounds of
// ours, the floor and bare node:http, alternating), BENCH_CONNECTIONS (default 32),
// BENCH_WARMUP_SECONDS (default 2). stdio start-up is measured by bench/startup-bench.mjs (`npm run
// bench` runs both).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  idleCost,
  load,
  measureAlternating,
  peakRssMiB,
  prepareTarget,
  startChild,
  stopChild,
} from './http-target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 10);

/** Starts a server, loads it and stops it. */
async function measure(name, start, headers, body, { prepare = async () => ({}) } = {}) {
  const { child, port } = await start();
  try {
    const extra = await prepare(port);
    const result = await load(port, child.pid, { ...headers, ...extra }, body, { seconds, warmup, connections });
    const errors = result.errors + result.timeouts + result.non2xx;
    return {
      name,
      requestsPerSecond: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      peakRssMiB: peakRssMiB(child.pid),
      cpuMicrosPerRequest: result.cpuMicrosPerRequest,
      errors,
      total: result.requests.total,
    };
  } finally {
    child.kill('SIGTERM');
  }
}

const target = await prepareTarget(root);
const { body, headers } = target;
/** The body of one answer of the server on `port`. */
const replyOf = (port) =>
  fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers, body }).then((r) => r.text());
let ourReply;
let floorReply;

console.error(
  `benchmark: svc_get_project over HTTP, ${connections} connections; ours, the floor and bare node:http in ${rounds} alternating rounds of ${seconds}s each after ${warmup}s warm-up; the SDK servers ${seconds}s each`,
);
// Ours and the two baselines its goals are measured against run side by side, loaded in
// alternating rounds, so that the machine's load changes fall on all three alike.
const side = [];
let alternating;
/** What the floor and ours cost idle after the rounds (`idleCost`). */
const idle = {};
try {
  for (const [name, start] of [
    [
      'bare node:http (fixed JSON-RPC reply)',
      () => startChild([join(root, 'bench/baselines/bare-server.mjs')], /PORT=(\d+)/),
    ],
    [
      'floor: node:http, 1 SQLite read, our reply',
      () =>
        startChild(
          [join(root, 'bench/baselines/floor-server.mjs'), join(target.dataDir, 'mobile-builder.db')],
          /PORT=(\d+)/,
        ),
    ],
    ['mobile-builder-mcp svc_get_project', () => startChild(target.serveArgs, target.readyPattern, root)],
  ]) {
    side.push({ name, headers, body, ...(await start()) });
  }
  floorReply = await replyOf(side[1].port);
  ourReply = await replyOf(side[2].port);
  alternating = await measureAlternating(side, { rounds, seconds, warmup, connections });
  alternating.forEach((r, i) => Object.assign(r, { peakRssMiB: peakRssMiB(side[i].child.pid), errors: 0 }));
  // Both at once, so that the machine's load falls on both alike.
  [idle.floor, idle.ours] = await Promise.all([side[1], side[2]].map((s) => idleCost(s.child.pid, idleSeconds)));
} finally {
  for (const server of side) await stopChild(server.child);
}
const [bare, floor, ours] = alternating;
const sdk = await measure(
  'stock SDK stateless (server per request)',
  () => startChild([join(root, 'bench/baselines/sdk-stateless-server.mjs')], /PORT=(\d+)/),
  headers,
  body,
);
const sdkLongLived = await measure(
  'SDK McpServer, long-lived (stateful JSON)',
  () => startChild([join(root, 'bench/baselines/sdk-long-lived-server.mjs')], /PORT=(\d+)/),
  headers,
  body,
  { prepare: initializeSession },
);
const results = [bare, floor, sdk, sdkLongLived, ours];

const pad = (s, n) => String(s).padEnd(n);
console.log(
  `${pad('server', 44)}${pad('req/s', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('peak RSS MiB', 14)}${pad('CPU µs/req', 12)}${pad('ours / this', 13)}errors`,
);
for (const r of results) {
  console.log(
    `${pad(r.name, 44)}${pad(r.requestsPerSecond.toFixed(0), 10)}${pad(r.p50Ms, 8)}${pad(r.p99Ms, 8)}${pad(r.peakRssMiB.toFixed(1), 14)}${pad(r.cpuMicrosPerRequest.toFixed(1), 12)}${pad(`${(ours.requestsPerSecond / r.requestsPerSecond).toFixed(2)}x`, 13)}${r.errors}`,
  );
}
const vsBare = ours.ratioTo(bare).requestsPerSecond;
const vsSdk = ours.requestsPerSecond / sdk.requestsPerSecond;
const vsSdkLongLived = ours.requestsPerSecond / sdkLongLived.requestsPerSecond;
// The goals' ratios: the median over the rounds of ours / the floor in the same round.
const vsFloor = ours.ratioTo(floor).requestsPerSecond;
const cpuVsFloor = ours.ratioTo(floor).cpuMicrosPerRequest;
const verdict = (ok) => (ok ? 'ok' : 'short');
const sameReply = floorReply === ourReply;
console.log(
  `\nthe floor's reply ${sameReply ? 'equals ours, byte for byte' : `differs from ours:\n  floor ${floorReply}\n  ours  ${ourReply}`}`,
);
console.log(
  `server CPU per request ours / floor: ${cpuVsFloor.toFixed(2)}x (goal <= 1.15x): ${verdict(cpuVsFloor <= 1.15)}`,
);
console.log(`req/s ours / floor: ${vsFloor.toFixed(2)}x (goal >= 0.9x): ${verdict(vsFloor >= 0.9)}`);
console.log(
  `req/s ours / bare node:http: ${vsBare.toFixed(2)}x; server CPU per request ours / bare: ${ours.ratioTo(bare).cpuMicrosPerRequest.toFixed(2)}x`,
);
console.log(`ratio ours / stock SDK stateless: ${vsSdk.toFixed(2)}x (target >= 3x)`);
console.log(`ratio ours / SDK McpServer long-lived: ${vsSdkLongLived.toFixed(2)}x`);
console.log(
  `server CPU per request ours / stock SDK: ${(ours.cpuMicrosPerRequest / sdk.cpuMicrosPerRequest).toFixed(2)}x; ours / long-lived SDK: ${(ours.cpuMicrosPerRequest / sdkLongLived.cpuMicrosPerRequest).toFixed(2)}x`,
);
console.log(
  `peak RSS ours / bare: ${(ours.peakRssMiB / bare.peakRssMiB).toFixed(2)}x; ours / stock SDK: ${(ours.peakRssMiB / sdk.peakRssMiB).toFixed(2)}x; ours / long-lived SDK: ${(ours.peakRssMiB / sdkLongLived.peakRssMiB).toFixed(2)}x`,
);

console.log(
  `idle for ${idleSeconds}s after the rounds: ours ${idle.ours.cpuMsPerSecond.toFixed(2)} ms of CPU and ${idle.ours.wakeupsPerSecond.toFixed(1)} event-loop wake-ups per second; the floor ${idle.floor.cpuMsPerSecond.toFixed(2)} ms and ${idle.floor.wakeupsPerSecond.toFixed(1)}`,
);

const limiter = await measureLimiter();
console.log(
  `\nrequest limiter, one counted request: in memory ${limiter.memoryMicros.toFixed(1)} µs; in the store (shared across processes) ${limiter.storeMicros.toFixed(1)} µs with leases of 256, ${limiter.storeWritePerRequestMicros.toFixed(1)} µs with a store write per request (limits under 32 a minute)`,
);

target.cleanup();
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'latest.json'),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      seconds,
      rounds,
      connections,
      results: results.map(({ ratioTo: _ratioTo, ...r }) => r),
      ratios: {
        vsBare,
        cpuVsBare: ours.ratioTo(bare).cpuMicrosPerRequest,
        vsFloor,
        cpuVsFloor,
        vsSdk,
        vsSdkLongLived,
        sameReplyAsFloor: sameReply,
      },
      idle,
      limiter,
    },
    null,
    2,
  ),
);
if (!sameReply) {
  console.error("the floor's reply differs from ours: its figures are not comparable");
  process.exitCode = 1;
}
if (results.some((r) => r.errors > 0)) {
  console.error('some requests failed: see the errors column');
  process.exitCode = 1;
}

/** Initializes one session of the long-lived SDK server; returns the headers every request then carries. */
async function initializeSession(port) {
  const url = `http://127.0.0.1:${port}/mcp`;
  const init = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  const extra = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.text());
  return extra;
}

async function measureLimiter() {
  const { MemoryRequestRateLimiter } = await import('../dist/limits/request-rate-limiter.js');
  const { StoreRequestRateLimiter } = await import('../dist/limits/store-rate-limiter.js');
  const { openStore } = await import('../dist/store/store.js');
  const limiterDir = mkdtempSync(join(tmpdir(), 'mbm-bench-limiter-'));
  const store = await openStore({ file: join(limiterDir, 'mobile-builder.db') });
  // keys: how many keys share the calls; limit: the plan's rate (a store write per 1/16 of it).
  const perCall = async (limiter, limit, keys) => {
    const n = 20_000;
    for (let i = 0; i < 1000; i++) await limiter.consume(`warm${i % 10}`, limit, 60);
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await limiter.consume(`key${i % keys}`, limit, 60);
    return Number(process.hrtime.bigint() - started) / 1000 / n;
  };
  const memoryMicros = await perCall(new MemoryRequestRateLimiter(), 1_000_000_000, 100);
  // A large limit: one claim from the store per 256 requests of a key.
  const storeMicros = await perCall(new StoreRequestRateLimiter(store.rateWindows), 1_000_000_000, 100);
  // A limit under 32 a minute: one claim (a write) per request, the most the store can cost.
  const storeWritePerRequestMicros = await perCall(new StoreRequestRateLimiter(store.rateWindows), 16, 2000);
  await store.close();
  rmSync(limiterDir, { recursive: true, force: true });
  return { memoryMicros, storeMicros, storeWritePerRequestMicros };
}
