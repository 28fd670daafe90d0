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
import { measureAlternating, prepareTarget, startChild, stopChild } from './http-target.mjs';

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
let base;
let cand;
try {
  for (const [label, dir] of [
    ['baseline', resolve(values.baseline)],
    ['candidate', resolve(values.candidate)],
  ]) {
    const target = await prepareTarget(dir);
    builds.push({ name: label, dir, target, headers: target.headers, body: target.body });
    Object.assign(builds.at(-1), await startChild(target.serveArgs, target.readyPattern, dir));
  }
  console.error(
    `comparing ${builds[1].dir} with ${builds[0].dir}: ${rounds} rounds of ${seconds}s each, ${connections} connections, svc_get_project over HTTP`,
  );
  [base, cand] = await measureAlternating(builds, { rounds, seconds, warmup: Number(values.warmup), connections });
} finally {
  for (const build of builds) {
    if (build.child) await stopChild(build.child);
    build.target.cleanup();
  }
}

const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('build', 12)}${pad('req/s (median)', 16)}${pad('CPU µs/req (median)', 21)}rounds (req/s, µs/req)`);
for (const b of [base, cand]) {
  const each = b.rounds.map((r) => `${r.requestsPerSecond.toFixed(0)}/${r.cpuMicrosPerRequest.toFixed(1)}`).join(' ');
  console.log(
    `${pad(b.name, 12)}${pad(b.requestsPerSecond.toFixed(0), 16)}${pad(b.cpuMicrosPerRequest.toFixed(1), 21)}${each}`,
  );
}
const ratio = cand.ratioTo(base);
console.log(
  `\ncandidate / baseline, median of the rounds: req/s ${ratio.requestsPerSecond.toFixed(3)}x; CPU per request ${ratio.cpuMicrosPerRequest.toFixed(3)}x`,
);
console.log(
  `within 10 % of the baseline: ${ratio.requestsPerSecond >= 0.9 && ratio.cpuMicrosPerRequest <= 1 / 0.9 ? 'ok' : 'short'}`,
);
