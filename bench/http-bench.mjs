// `npm run bench`: svc_get_project over HTTP under autocannon, against two baselines started in the
// same run (a bare node:http server and the SDK's stock stateless server). Prints requests/s,
// p50/p99 latency and peak RSS of each server process, and the ratios. Figures are relative:
// the machine is shared and noisy, so only the ratios within one run mean much.
//
// Options (env): BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32), BENCH_WARMUP_SECONDS (default 2).
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

async function measure(name, start, headers, body) {
  const { child, port } = await start();
  try {
    const result = await load(port, child.pid, headers, body);
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
  await measure(
    'mobile-builder-mcp svc_get_project',
    () => startChild([BIN, 'serve', '--http', '--port', '0', '--data-dir', dataDir, '--plans', plans, '--log-level', 'warn'], /listening on http:\/\/127\.0\.0\.1:(\d+)/),
    headers,
    body,
  ),
);
rmSync(dataDir, { recursive: true, force: true });

const [bare, sdk, ours] = results;
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('server', 44)}${pad('req/s', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('peak RSS MiB', 14)}${pad('CPU µs/req', 12)}errors`);
for (const r of results) {
  console.log(
    `${pad(r.name, 44)}${pad(r.requestsPerSecond.toFixed(0), 10)}${pad(r.p50Ms, 8)}${pad(r.p99Ms, 8)}${pad(r.peakRssMiB.toFixed(1), 14)}${pad(r.cpuMicrosPerRequest.toFixed(1), 12)}${r.errors}`,
  );
}
const vsBare = ours.requestsPerSecond / bare.requestsPerSecond;
const vsSdk = ours.requestsPerSecond / sdk.requestsPerSecond;
console.log(`\nratio ours / bare node:http: ${vsBare.toFixed(2)}x (target >= 0.5x)`);
console.log(`ratio ours / stock SDK stateless: ${vsSdk.toFixed(2)}x (target >= 3x)`);
console.log(`server CPU per request ours / bare: ${(ours.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(2)}x; ours / stock SDK: ${(ours.cpuMicrosPerRequest / sdk.cpuMicrosPerRequest).toFixed(2)}x`);
console.log(`peak RSS ours / bare: ${(ours.peakRssMiB / bare.peakRssMiB).toFixed(2)}x; ours / stock SDK: ${(ours.peakRssMiB / sdk.peakRssMiB).toFixed(2)}x`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'latest.json'), JSON.stringify({ date: new Date().toISOString(), seconds, connections, results, ratios: { vsBare, vsSdk } }, null, 2));
if (results.some((r) => r.errors > 0)) {
  console.error('some requests failed: see the errors column');
  process.exitCode = 1;
}
