// `npm run bench:compare -- --baseline DIR`: svc_get_project over HTTP on two builds of this
// server, measured in the same run under the same load, in alternating rounds (A B, then B A, ...)
// so that a change of the machine's load falls on both. Prints each build's median req/s and
// server CPU per request, and the candidate's ratios to the baseline (the median of the per-round
// ratios, each round's two builds measured back to back).
//
// DIR is a checkout with `bin/` and a built `dist/`; for an older commit:
//   git worktree add /tmp/base <commit> && cp -a node_modules /tmp/base/ && (cd /tmp/base && npm run build)
// Each build gets its own data dir, made by its own CLI (the migrations may differ).
//
// Options: --baseline DIR (required), --candidate DIR (default this checkout), --rounds N
// (default 6), --seconds S per build and round (default 5), --warmup S (default 3),
// --connections N (default 32).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { load, prepareTarget, startChild, stopChild } from './http-target.mjs';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    candidate: { type: 'string', default: join(dirname(fileURLToPath(import.meta.url)), '..') },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
  },
});
if (!values.baseline) {
  console.error('usage: node bench/compare-builds.mjs --baseline DIR [--candidate DIR] [--rounds N] [--seconds S]');
  process.exit(2);
}
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const builds = [];
try {
  for (const [label, dir] of [
    ['baseline', resolve(values.baseline)],
    ['candidate', resolve(values.candidate)],
  ]) {
    const target = await prepareTarget(dir);
    const { child, port } = await startChild(target.serveArgs, target.readyPattern, dir);
    builds.push({ label, dir, target, child, port, rounds: [] });
  }
  console.error(`comparing ${builds[1].dir} with ${builds[0].dir}: ${rounds} rounds of ${seconds}s each, ${connections} connections, svc_get_project over HTTP`);
  const run = async (build, duration, warmup = 0) => {
    const r = await load(build.port, build.child.pid, build.target.headers, build.target.body, { seconds: duration, warmup, connections });
    const errors = r.errors + r.timeouts + r.non2xx;
    if (errors > 0) throw new Error(`${build.label}: ${errors} requests failed`);
    return { requestsPerSecond: r.requests.average, cpuMicrosPerRequest: r.cpuMicrosPerRequest };
  };
  for (const build of builds) await run(build, Number(values.warmup));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) build.rounds.push(await run(build, seconds));
  }
} finally {
  for (const build of builds) {
    await stopChild(build.child);
    build.target.cleanup();
  }
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const [base, cand] = builds;
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('build', 12)}${pad('req/s (median)', 16)}${pad('CPU µs/req (median)', 21)}rounds (req/s, µs/req)`);
for (const b of builds) {
  const each = b.rounds.map((r) => `${r.requestsPerSecond.toFixed(0)}/${r.cpuMicrosPerRequest.toFixed(1)}`).join(' ');
  console.log(`${pad(b.label, 12)}${pad(median(b.rounds.map((r) => r.requestsPerSecond)).toFixed(0), 16)}${pad(median(b.rounds.map((r) => r.cpuMicrosPerRequest)).toFixed(1), 21)}${each}`);
}
const rps = median(cand.rounds.map((r, i) => r.requestsPerSecond / base.rounds[i].requestsPerSecond));
const cpu = median(cand.rounds.map((r, i) => r.cpuMicrosPerRequest / base.rounds[i].cpuMicrosPerRequest));
console.log(`\ncandidate / baseline, median of the rounds: req/s ${rps.toFixed(3)}x; CPU per request ${cpu.toFixed(3)}x`);
console.log(`within 10 % of the baseline: ${rps >= 0.9 && cpu <= 1 / 0.9 ? 'ok' : 'short'}`);
