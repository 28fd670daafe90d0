// `npm run bench`: every benchmark in turn, then each performance goal of the README's
// "Performance" section as one line: the figure as a ratio to its baseline measured in the same
// run, the goal, and `ok` or `short`. The parts:
//
// - bench/http-bench.mjs: svc_get_project against the floor and bare node:http (goal 1);
// - bench/tool-bench.mjs: svc_get_session, svc_get_messages, svc_send_message against
//   svc_get_project, and svc_list_projects against the floor (goals 2 and 6);
// - bench/startup-bench.mjs: stdio spawn to the answer to initialize against bare node (goal 3);
// - bench/lease-bench.mjs: lease takeover after SIGKILL and the heartbeat's writes (goal 5);
// - bench/multinode.mjs: API nodes and workers on PostgreSQL: a worker's takeover after SIGKILL,
//   builds per minute with 1 and 2 workers, svc_get_project on PostgreSQL against SQLite (reported);
// - bench/wait-bench.mjs: 1,000 open svc_get_session waits (SSE, one user each): the server's RSS
//   above idle while all are open, and how many answered (round three, goal 6: at most 64 MiB, and
//   every one answers).
//
// Goal 4 (each build and install keeps its own code cache) is a test, tests/code-cache.test.ts.
// Goal 3.5 (the expo builder against bare `expo export` runs) is bench/expo-bench.mjs, which takes
// minutes: this shows the newest figures it wrote, with their file and time, or 'not measured'.
// Each part writes its figures to bench/results/; a part that fails is reported as not measured
// (its file is older than this run), and the exit code is non-zero. A `short` goal is a finding,
// not a failure.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expoGoalLines, goalLines } from './goal-lines.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();
const PARTS = [
  ['http-bench.mjs', 'latest.json'],
  ['tool-bench.mjs', 'tools.json'],
  ['startup-bench.mjs', 'startup.json'],
  ['lease-bench.mjs', 'leases.json'],
  ['multinode.mjs', 'multinode.json'],
  ['wait-bench.mjs', 'waits.json'],
];

const results = {};
let failed = false;
for (const [script, file] of PARTS) {
  const run = spawnSync(process.execPath, [join(root, 'bench', script)], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    failed = true;
    console.error(`bench/${script} failed (${run.status ?? run.signal})`);
  }
  results[file] = readFresh(join(root, 'bench', 'results', file));
}

/** The newest bench/results/expo-<time>.json (bench/expo-bench.mjs) and its figures, if any. */
function newestExpoFigures() {
  const dir = join(root, 'bench', 'results');
  let names;
  try {
    names = readdirSync(dir).filter((name) => /^expo-.*\.json$/.test(name));
  } catch {
    return undefined;
  }
  // The names hold the ISO time of the run, so the newest sorts last.
  const file = names.sort().at(-1);
  if (!file) return undefined;
  try {
    return { file: `bench/results/${file}`, figures: JSON.parse(readFileSync(join(dir, file), 'utf8')) };
  } catch {
    return undefined;
  }
}

/** The figures of a part, when it wrote them during this run. */
function readFresh(path) {
  try {
    const figures = JSON.parse(readFileSync(path, 'utf8'));
    return Date.parse(figures.date) >= started ? figures : undefined;
  } catch {
    return undefined;
  }
}

const lines = goalLines();
const { goal, reported, line } = lines;

const http = results['latest.json'];
goal(1, 'svc_get_project CPU per request / the floor', http?.ratios.cpuVsFloor, 1.15);
goal(1, 'svc_get_project req/s / the floor', http?.ratios.vsFloor, 0.9, { atLeast: true });
reported('svc_get_project CPU per request / bare node:http', http?.ratios.cpuVsBare?.toFixed(2).concat('x'));
reported(
  'an idle HTTP server: CPU and event-loop wake-ups per second',
  http?.idle && `${http.idle.ours.cpuMsPerSecond.toFixed(1)} ms, ${http.idle.ours.wakeupsPerSecond.toFixed(0)} /s`,
);
const tools = results['tools.json'];
const call = (key) => tools?.calls.find((c) => c.key === key);
goal(2, 'svc_get_session idle / svc_get_project (CPU)', call('sessionIdle')?.cpuRatio, 2);
goal(2, 'svc_get_session 1 running + 50 queued / svc_get_project', call('sessionQueued')?.cpuRatio, 3);
reported(
  'svc_get_messages limit 100 / svc_get_project (CPU)',
  call('messages') && `${call('messages').cpuRatioToProject.toFixed(2)}x`,
);
reported('svc_send_message / svc_get_project (CPU)', call('send') && `${call('send').cpuRatioToProject.toFixed(2)}x`);
const startup = results['startup.json'];
goal(3, 'stdio spawn -> initialize, warm cache / bare node', startup?.warmRatio, 2);
goal(3, 'stdio spawn -> initialize, first start / bare node', startup?.coldRatio, 2.5);
reported(
  'stdio spawn -> first tools/list answered, warm / first start',
  startup?.warmToolsMs && `${Math.round(startup.warmToolsMs)} / ${Math.round(startup.coldToolsMs)} ms`,
);
line(4, 'code cache per build and install path', 'a test: tests/code-cache.test.ts');
const leases = results['leases.json'];
goal(
  5,
  'lease takeover after SIGKILL, median (defaults)',
  leases?.defaults ? leases.takeoverAfterSigkillMs.median : undefined,
  3000,
  { unit: 'ms' },
);
reported('heartbeat writes/s per running workflow', leases?.heartbeatWritesPerSecondPerRunningWorkflow?.toString());
goal(
  6,
  'svc_list_projects, 1,000 projects / the floor (CPU)',
  tools?.sameListReply ? call('list')?.cpuRatio : undefined,
  1.2,
);
const multinode = results['multinode.json'];
reported(
  'PostgreSQL: worker SIGKILL -> next build on another worker',
  multinode && `${Math.round(multinode.takeover.nextStartedMs.median)} ms (lease ${multinode.leaseMs} ms)`,
);
reported(
  'PostgreSQL: svc_get_project req/s, API node / SQLite',
  multinode && `${multinode.getProject.ratio.requestsPerSecond.toFixed(2)}x`,
);

// Round three (docs/performance.md "Round three"); the goals above are the earlier rounds'.
line('', 'round three:');
if (tools?.postgresCpuIncluded)
  goal('3.1', 'svc_get_project on PostgreSQL (node + postgres CPU) / on SQLite', call('projectPg')?.cpuRatio, 1.5);
else
  reported(
    '3.1 svc_get_project on PostgreSQL / on SQLite (node CPU only)',
    call('projectPg') ? `${call('projectPg').cpuRatio.toFixed(2)}x` : tools?.postgres,
  );
line(
  '3.1',
  '130 calls through two API nodes: 95 to 100 allowed',
  'a test: tests/multinode/limits-across-nodes.test.ts',
);
goal(
  '3.2',
  'svc_send_message / the floor (one transaction) (CPU)',
  tools?.sameSendReply ? call('send')?.cpuRatio : undefined,
  1.5,
);
goal(
  '3.3',
  'svc_get_messages limit 100 / the floor (CPU)',
  tools?.sameMessagesReply ? call('messages')?.cpuRatio : undefined,
  1.3,
);
goal('3.4', 'PostgreSQL: builds per minute, 2 workers / 1 worker', multinode?.buildsPerMinute.ratio, 1.85, {
  atLeast: true,
});
goal(
  '3.4',
  'PostgreSQL: worker CPU per scripted build (outside the builder)',
  multinode?.buildsPerMinute.workerCpuMsPerBuild,
  150,
  { unit: 'ms' },
);
const waits = results['waits.json'];
goal(
  '3.6',
  `${waits?.waits ?? 1000} open svc_get_session waits (SSE): server RSS above idle`,
  waits && waits.openAtOnce === waits.waits ? waits.aboveIdleMiB : undefined,
  64,
  { unit: 'MiB' },
);
reported(
  '3.6 the same, above the idle server before any load',
  waits?.aboveColdIdleMiB !== undefined ? `${Math.round(waits.aboveColdIdleMiB)} MiB` : undefined,
);
goal('3.6', 'open svc_get_session waits answered with a result', waits?.answered, waits?.waits ?? 1000, {
  atLeast: true,
  unit: 'waits',
});

// Goal 3.5 takes minutes (toolchain install, cold and native exports): `npm run bench` does not
// run it, and shows the newest `npm run bench:expo` figures, named as such, or 'not measured'.
const expo = newestExpoFigures();
reported(
  'goal 3.5: the newest npm run bench:expo, not this run',
  expo && `${expo.file}${expo.figures.date ? ` (started ${expo.figures.date})` : ''}`,
);
expoGoalLines(lines, expo?.figures);

lines.print('performance goals, each against its baseline measured in this run:');
if (failed) process.exitCode = 1;
