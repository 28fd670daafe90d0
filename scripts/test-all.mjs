#!/usr/bin/env node
// `npm test`: the build, the type check and the lint, then each vitest project in turn (unit,
// process, expo), every one of them run even when an earlier one failed. Each step's output is
// passed through as it is (vitest's closing "Test Files"/"Tests" lines included, which CI reads);
// a summary of every step and its time follows, and the exit code is non-zero when any step failed.
// `node scripts/test-all.mjs unit expo` runs only the steps named.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const vitest = [process.execPath, 'node_modules/vitest/vitest.mjs', 'run'];

/** The steps, in order: name and argv. */
const STEPS = [
  ['build', [npm, 'run', 'build']],
  ['typecheck', [npm, 'run', 'typecheck']],
  ['lint', [npm, 'run', 'lint']],
  ['unit', [...vitest, '--project', 'unit']],
  ['process', [...vitest, '--project', 'process']],
  // One file at a time: real exports use the whole machine.
  ['expo', [...vitest, '--project', 'expo', '--no-file-parallelism']],
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !STEPS.some(([step]) => step === name));
if (unknown.length) {
  console.error(`test-all: unknown step ${unknown.join(', ')} (steps: ${STEPS.map(([s]) => s).join(', ')})`);
  process.exit(2);
}

const results = [];
const started = Date.now();
for (const [name, [file, ...args]] of STEPS) {
  if (wanted.length && !wanted.includes(name)) continue;
  console.log(`\n=== test-all: ${name}: ${[file, ...args].join(' ')}\n`);
  const t0 = Date.now();
  const run = spawnSync(file, args, { cwd: root, stdio: 'inherit' });
  const code = run.error
    ? `could not start (${run.error.message})`
    : run.signal
      ? `killed by ${run.signal}`
      : run.status;
  results.push({ name, ok: run.status === 0, code, seconds: (Date.now() - t0) / 1000 });
}

const minutes = (s) => (s >= 60 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${s.toFixed(1)} s`);
console.log('\n=== test-all: summary');
for (const r of results)
  console.log(
    `  ${r.ok ? 'pass' : 'FAIL'}  ${r.name.padEnd(10)} ${minutes(r.seconds).padStart(12)}${r.ok ? '' : `  (exit ${r.code})`}`,
  );
const failed = results.filter((r) => !r.ok).map((r) => r.name);
console.log(
  `  ${failed.length ? `FAILED: ${failed.join(', ')}` : 'all passed'} in ${minutes((Date.now() - started) / 1000)}`,
);
process.exit(failed.length ? 1 : 0);
