// `npm run bench`, three parts, each against baselines measured in the same run (figures are
// relative: the machine is shared and noisy, so only the ratios within one run mean much):
//
// 1. svc_get_project over HTTP under autocannon, against three baselines: a bare node:http server,
//    the SDK's stock stateless server (a server per request), and a long-lived SDK McpServer (one
//    server and transport reused, stateful JSON mode). Requests/s, p50/p99 latency, peak RSS and
//    server CPU per request of each, in one table, and the ratios.
// 2. The request limiter: cost of counting one request in process memory and in the store
//    (shared by every process on the data dir).
//
// Options (env): BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32), BENCH_WARMUP_SECONDS
// (default 2). stdio start-up is measured by bench/startup-bench.mjs (`npm run bench` runs both).
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

function startChild(args, readyPattern) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d.toString();
      const m = readyPattern.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
    setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000).unref();
  });
}

/** CPU time (user + system) the process has used, in clock ticks (10 ms each on Linux). */
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function load(port, pid, headers, body) {
  const opts = { url: `http://127.0.0.1:${port}/mcp`, method: 'POST', headers, body, connections, pipelining: 1 };
  if (warmup > 0) await autocannon({ ...opts, duration: warmup });
  const before = cpuTicks(pid);
  const result = await autocannon({ ...opts, duration: seconds });
  result.cpuMicrosPerRequest = ((cpuTicks(pid) - before) * 10_000) / Math.max(1, result.requests.total);
  return result;
}

async function measure(name, start, headers, body, prepare = async () => ({})) {
  const { child, port } = await start();
  try {
    const result = await load(port, child.pid, { ...headers, ...(await prepare(port)) }, body);
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

const dataDir = mkdtempSync(join(tmpdir(), 'mbm-bench-'));
const plans = join(dataDir, 'plans.json');
// The benchmark measures throughput, not the limiter: give its user a plan without a practical rate limit.
writeFileSync(plans, JSON.stringify({ bench: { requestsPerMinute: 1_000_000_000, projectCreationsPerHour: 10, maxProjects: 10 } }));
const cli = (...args) => spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8' });
const token = cli('token', 'create', '--user', 'bench').stdout.trim().split('\n').at(-1);
cli('user', 'set-plan', 'bench', 'bench', '--plans', plans);

// Create the project through a short-lived server.
const setup = await startChild([BIN, 'serve', '--http', '--port', '0', '--data-dir', dataDir, '--plans', plans, '--log-level', 'warn'], /listening on http:\/\/127\.0\.0\.1:(\d+)/);
const created = await fetch(`http://127.0.0.1:${setup.port}/mcp`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_create_project', arguments: { name: 'Bench' } } }),
}).then((r) => r.json());
setup.child.kill('SIGTERM');
await new Promise((r) => setup.child.once('exit', r));
const projectId = created.result.structuredContent.id;

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_get_project', arguments: { projectId } } });
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };

console.error(`benchmark: ${seconds}s per server after ${warmup}s warm-up, ${connections} connections, svc_get_project over HTTP`);
const results = [];
results.push(await measure('bare node:http (fixed JSON-RPC reply)', () => startChild([join(root, 'bench/baselines/bare-server.mjs')], /PORT=(\d+)/), headers, body));
results.push(await measure('stock SDK stateless (server per request)', () => startChild([join(root, 'bench/baselines/sdk-stateless-server.mjs')], /PORT=(\d+)/), headers, body));
results.push(
  await measure('SDK McpServer, long-lived (stateful JSON)', () => startChild([join(root, 'bench/baselines/sdk-long-lived-server.mjs')], /PORT=(\d+)/), headers, body, initializeSession),
);
results.push(
  await measure(
    'mobile-builder-mcp svc_get_project',
    () => startChild([BIN, 'serve', '--http', '--port', '0', '--data-dir', dataDir, '--plans', plans, '--log-level', 'warn'], /listening on http:\/\/127\.0\.0\.1:(\d+)/),
    headers,
    body,
  ),
);

const [bare, sdk, sdkLongLived, ours] = results;
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('server', 44)}${pad('req/s', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('peak RSS MiB', 14)}${pad('CPU µs/req', 12)}${pad('ours / this', 13)}errors`);
for (const r of results) {
  console.log(
    `${pad(r.name, 44)}${pad(r.requestsPerSecond.toFixed(0), 10)}${pad(r.p50Ms, 8)}${pad(r.p99Ms, 8)}${pad(r.peakRssMiB.toFixed(1), 14)}${pad(r.cpuMicrosPerRequest.toFixed(1), 12)}${pad(`${(ours.requestsPerSecond / r.requestsPerSecond).toFixed(2)}x`, 13)}${r.errors}`,
  );
}
const vsBare = ours.requestsPerSecond / bare.requestsPerSecond;
const vsSdk = ours.requestsPerSecond / sdk.requestsPerSecond;
const vsSdkLongLived = ours.requestsPerSecond / sdkLongLived.requestsPerSecond;
console.log(`\nratio ours / bare node:http: ${vsBare.toFixed(2)}x (target >= 0.5x)`);
console.log(`ratio ours / stock SDK stateless: ${vsSdk.toFixed(2)}x (target >= 3x)`);
console.log(`ratio ours / SDK McpServer long-lived: ${vsSdkLongLived.toFixed(2)}x`);
console.log(`server CPU per request ours / bare: ${(ours.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(2)}x; ours / stock SDK: ${(ours.cpuMicrosPerRequest / sdk.cpuMicrosPerRequest).toFixed(2)}x; ours / long-lived SDK: ${(ours.cpuMicrosPerRequest / sdkLongLived.cpuMicrosPerRequest).toFixed(2)}x`);
console.log(`peak RSS ours / bare: ${(ours.peakRssMiB / bare.peakRssMiB).toFixed(2)}x; ours / stock SDK: ${(ours.peakRssMiB / sdk.peakRssMiB).toFixed(2)}x; ours / long-lived SDK: ${(ours.peakRssMiB / sdkLongLived.peakRssMiB).toFixed(2)}x`);

const limiter = await measureLimiter();
console.log(
  `\nrequest limiter, one counted request: in memory ${limiter.memoryMicros.toFixed(1)} µs; in the store (shared across processes) ${limiter.storeMicros.toFixed(1)} µs with leases of 256, ${limiter.storeWritePerRequestMicros.toFixed(1)} µs with a store write per request (limits under 32 a minute)`,
);

rmSync(dataDir, { recursive: true, force: true });
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'latest.json'),
  JSON.stringify({ date: new Date().toISOString(), seconds, connections, results, ratios: { vsBare, vsSdk, vsSdkLongLived }, limiter }, null, 2),
);
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
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
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
  const { openStore } = await import('../dist/store/database.js');
  const limiterDir = mkdtempSync(join(tmpdir(), 'mbm-bench-limiter-'));
  const store = openStore(join(limiterDir, 'mobile-builder.db'));
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
  const storeMicros = await perCall(new StoreRequestRateLimiter(store.sqlite), 1_000_000_000, 100);
  // A limit under 32 a minute: one claim (a write) per request, the most the store can cost.
  const storeWritePerRequestMicros = await perCall(new StoreRequestRateLimiter(store.sqlite), 16, 2000);
  store.close();
  rmSync(limiterDir, { recursive: true, force: true });
  return { memoryMicros, storeMicros, storeWritePerRequestMicros };
}
