// `npm run bench:startup` (and part of `npm run bench`): stdio start-up, from spawn to the answer to
// `initialize`, against a bare Node process that reads one JSON-RPC line and answers initialize
// (bench/baselines/bare-stdio-initialize.cjs), measured in the same run, alternating, so that the
// machine's load weighs on both alike. Two figures: with the V8 code cache warm (every start after
// the first) and on a first start (an empty cache folder). Medians of BENCH_STARTS spawns (default
// 15), reported as ratios to the baseline with `ok`/`short` against the goals (README
// "Performance"): warm <= 2x, first start <= 2.5x.
//
// Beside each start's answer to initialize, the time to its answer to the first `tools/list` (sent
// with `notifications/initialized` once initialize is answered, as hosts do): the first answer that
// needs the whole server (the main bundle, the tools, the store), reported in ms, with no goal.
//
// A plain stdio `serve` gets its answer to initialize from the early bundle (README "Start-up
// time"); a command line the early start leaves to the main bundle (here `--body-limit`, with the
// warm cache) is timed too, beside the goals, so that a regression of that path shows.
//
// It also reports how much code a stdio start reads: the stdio bundle's size and the number of
// modules in it, from the build's metafile summary (dist/bundle-stats.json, scripts/bundle.mjs);
// the HTTP wing's bundles are beside it and a stdio start never loads them.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const starts = Number(process.env.BENCH_STARTS ?? 15);
const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`;
const listTools = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`;

/** CPU time the process has used so far (ms), from Linux's /proc/<pid>/schedstat; NaN elsewhere. */
function cpuMsOf(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * Milliseconds from spawn to the first stdout line (the answer to initialize), and the CPU
 * milliseconds the process used by then; with `tools`, also the milliseconds to the answer to the
 * `tools/list` sent once initialize is answered.
 */
async function timeToAnswer(args, env, tools = false) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } });
  child.stdin.write(initialize);
  let out = '';
  let ms;
  let cpuMs;
  let toolsMs;
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const lines = out.split('\n').length - 1;
      if (lines >= 1 && ms === undefined) {
        ms = performance.now() - started;
        cpuMs = cpuMsOf(child.pid);
        if (tools) child.stdin.write(listTools);
      }
      if (lines >= (tools ? 2 : 1)) {
        toolsMs = performance.now() - started;
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before answering: ${out}`)));
  });
  const [first, second] = out.split('\n');
  if (!JSON.parse(first).result || (tools && !JSON.parse(second).result?.tools)) throw new Error(`no result: ${out}`);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return { ms, cpuMs, ...(tools && { toolsMs }) };
}

/** Runs one start that lives until the bin reports the code cache written (a debug line on stderr). */
async function warmUp(serve, cacheHome) {
  const child = spawn(process.execPath, serve, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, XDG_CACHE_HOME: cacheHome, MBM_DEBUG_CODE_CACHE: '1' },
  });
  child.stdin.write(initialize);
  child.stdout.once('data', () => child.stdin.write(listTools));
  let err = '';
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      if (/code cache written/.test(err)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before writing its code cache: ${err}`)));
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const verdict = (ratio, goal) => `${ratio.toFixed(2)}x, goal <= ${goal}x: ${ratio <= goal ? 'ok' : 'short'}`;

const dir = mkdtempSync(join(tmpdir(), 'mbm-bench-start-'));
try {
  const serve = [BIN, 'serve', '--data-dir', join(dir, 'data'), '--log-level', 'warn'];
  const bare = [join(root, 'bench', 'baselines', 'bare-stdio-initialize.cjs')];
  const warmCache = join(dir, 'cache-warm');
  await warmUp(serve, warmCache);
  // One start of each first, not counted: the files are in the page cache for all alike.
  await timeToAnswer(bare, {});
  await timeToAnswer(serve, { XDG_CACHE_HOME: warmCache });
  const runs = { bare: [], warm: [], cold: [], main: [] };
  for (let i = 0; i < starts; i++) {
    runs.bare.push(await timeToAnswer(bare, {}));
    runs.warm.push(await timeToAnswer(serve, { XDG_CACHE_HOME: warmCache }, true));
    runs.cold.push(await timeToAnswer(serve, { XDG_CACHE_HOME: join(dir, `cache-cold-${i}`) }, true));
    runs.main.push(await timeToAnswer([...serve, '--body-limit', '1048576'], { XDG_CACHE_HOME: warmCache }));
  }
  const [bareMs, warmMs, coldMs] = ['bare', 'warm', 'cold'].map((k) => median(runs[k].map((r) => r.ms)));
  const [bareCpuMs, warmCpuMs, coldCpuMs] = ['bare', 'warm', 'cold'].map((k) => median(runs[k].map((r) => r.cpuMs)));
  const [warmToolsMs, coldToolsMs] = ['warm', 'cold'].map((k) => median(runs[k].map((r) => r.toolsMs)));
  const mainMs = median(runs.main.map((r) => r.ms));
  const stats = JSON.parse(readFileSync(join(root, 'dist', 'bundle-stats.json'), 'utf8'));
  console.log(`\nstdio start-up, spawn to the answer to initialize (median of ${starts}):`);
  console.log(`  bare node answering initialize: ${bareMs.toFixed(0)} ms (${bareCpuMs.toFixed(0)} ms of CPU)`);
  console.log(
    `  mobile-builder-mcp serve, code cache warm: ${warmMs.toFixed(0)} ms (${verdict(warmMs / bareMs, 2)}); ${warmCpuMs.toFixed(0)} ms of CPU (${(warmCpuMs / bareCpuMs).toFixed(2)}x)`,
  );
  console.log(
    `  mobile-builder-mcp serve, first start: ${coldMs.toFixed(0)} ms (${verdict(coldMs / bareMs, 2.5)}); ${coldCpuMs.toFixed(0)} ms of CPU (${(coldCpuMs / bareCpuMs).toFixed(2)}x)`,
  );
  console.log(
    `  a command line left to the main bundle (--body-limit), code cache warm: ${mainMs.toFixed(0)} ms (${(mainMs / bareMs).toFixed(2)}x)`,
  );
  console.log(
    `  the answer to the first tools/list (sent once initialize is answered): ${warmToolsMs.toFixed(0)} ms warm, ${coldToolsMs.toFixed(0)} ms on a first start`,
  );
  for (const [name, b] of Object.entries(stats))
    console.log(`  ${name}: ${b.file}, ${(b.bytes / 1024).toFixed(0)} KiB, ${b.modules} modules`);
  const report = {
    date: new Date().toISOString(),
    starts,
    bareMs,
    warmMs,
    coldMs,
    warmRatio: warmMs / bareMs,
    coldRatio: coldMs / bareMs,
    bareCpuMs,
    warmCpuMs,
    coldCpuMs,
    warmToolsMs,
    coldToolsMs,
    mainMs,
    mainRatio: mainMs / bareMs,
    bundles: stats,
  };
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'startup.json'), `${JSON.stringify(report, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
