// `npm run bench:startup` (and part of `npm run bench`): stdio start-up, from spawn to the answer to
// `initialize`, against a bare Node process that reads one JSON-RPC line and answers initialize
// (bench/baselines/bare-stdio-initialize.cjs), measured in the same run, alternating, so that the
// machine's load weighs on both alike. Two figures: with the V8 code cache warm (every start after
// the first) and on a first start (an empty cache folder). Medians of BENCH_STARTS spawns (default
// 15), reported as ratios to the baseline with `ok`/`short` against the goals (README
// "Performance"): warm <= 2x, first start <= 2.5x.
//
// It also reports how much of the code the stdio path evaluates: the bundle's size and the number
// of bundled modules the stdio server runs (`MBM_DEBUG_MODULES=1` makes the bin print it to stderr).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const starts = Number(process.env.BENCH_STARTS ?? 15);
const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`;

/** Milliseconds from spawn to the first stdout line, the answer to initialize. */
async function timeToAnswer(args, env) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } });
  child.stdin.write(initialize);
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before answering: ${out}`)));
  });
  const ms = performance.now() - started;
  if (!JSON.parse(out.slice(0, out.indexOf('\n'))).result) throw new Error(`no result: ${out}`);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return ms;
}

/** Runs one start that lives until the bin reports the code cache written (a debug line on stderr). */
async function warmUp(serve, cacheHome) {
  const child = spawn(process.execPath, serve, { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, XDG_CACHE_HOME: cacheHome, MBM_DEBUG_CODE_CACHE: '1' } });
  child.stdin.write(initialize);
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

/** The number of bundled modules a stdio start evaluates, as the bin reports it. */
async function modulesEvaluated(serve, cacheHome) {
  const child = spawn(process.execPath, serve, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, XDG_CACHE_HOME: cacheHome, MBM_DEBUG_MODULES: '1' } });
  child.stdin.write(initialize);
  let err = '';
  let out = '';
  child.stderr.on('data', (d) => (err += d));
  await new Promise((resolve) => child.stdout.on('data', (d) => (out += d).includes('\n') && resolve()));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const m = /modules evaluated: (\d+) of (\d+)/.exec(err);
  return m ? { evaluated: Number(m[1]), bundled: Number(m[2]) } : undefined;
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
  const times = { bare: [], warm: [], cold: [] };
  for (let i = 0; i < starts; i++) {
    times.bare.push(await timeToAnswer(bare, {}));
    times.warm.push(await timeToAnswer(serve, { XDG_CACHE_HOME: warmCache }));
    times.cold.push(await timeToAnswer(serve, { XDG_CACHE_HOME: join(dir, `cache-cold-${i}`) }));
  }
  const bareMs = median(times.bare);
  const warmMs = median(times.warm);
  const coldMs = median(times.cold);
  const modules = await modulesEvaluated(serve, warmCache);
  const bundleBytes = statSync(join(root, 'dist', 'mobile-builder-mcp.cjs')).size;
  console.log(`\nstdio start-up, spawn to the answer to initialize (median of ${starts}):`);
  console.log(`  bare node answering initialize: ${bareMs.toFixed(0)} ms`);
  console.log(`  mobile-builder-mcp serve, code cache warm: ${warmMs.toFixed(0)} ms (${verdict(warmMs / bareMs, 2)})`);
  console.log(`  mobile-builder-mcp serve, first start: ${coldMs.toFixed(0)} ms (${verdict(coldMs / bareMs, 2.5)})`);
  console.log(`  stdio bundle: ${(bundleBytes / 1024).toFixed(0)} KiB${modules ? `, ${modules.evaluated} of its ${modules.bundled} modules evaluated on stdio` : ''}`);
  const report = { date: new Date().toISOString(), starts, bareMs, warmMs, coldMs, warmRatio: warmMs / bareMs, coldRatio: coldMs / bareMs, bundleBytes, modules };
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'startup.json'), `${JSON.stringify(report, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
