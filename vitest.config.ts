import { defineConfig } from 'vitest/config';
import { PROCESS_TESTS } from './tests/setup/test-kinds.js';

// Three projects (docs/architecture.md "Tests: which kind goes where"):
// - `unit`: our code from src/ in the vitest worker (real servers on port 0, real SQLite, real SDK
//   clients); no build needed. `npm run test:unit`, the loop to run after each edit.
// - `process`: the tests that spawn the built bin, headless Chromium or a third-party client
//   (the list is tests/setup/test-kinds.ts). Their global set-up rebuilds dist/ first when it is
//   older than src/, so they never test an old build.
// - `expo`: installs Expo SDK 56 into .cache/expo-toolchain once, then builds, deploys and opens
//   previews in headless Chromium.
// `npm test` (scripts/test-all.mjs) runs each project in turn, expo with one file at a time (real
// exports use the whole machine), so the heavy one never slows the others down.
//
// The timeouts are hang guards, not timing assertions: tests wait on states, and a test that takes
// 5 s on a quiet machine may take ten times that on one busy with other work. They end a run that
// hangs, and are generous enough that a slow machine never fails a test.
const HANG_GUARD_MS = 300_000;
const fast = { testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS };
export default defineConfig({
  test: {
    // PostgreSQL for the suites that ask for it (docs/postgresql.md, "Tests"): run once per vitest
    // run, whichever projects run; every project inherits what it provides. The cluster itself
    // starts only when a test file asks for a database.
    globalSetup: ['tests/setup/postgres.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // A store transaction that stays open across I/O fails the run (src/store/store.ts), here and
    // in the processes the tests spawn (they inherit the environment).
    env: { SVC_STRICT_TRANSACTIONS: '1' },
    // Only the unit project runs on threads; the others keep a fresh process per file.
    poolOptions: { threads: { isolate: false } },
    projects: [
      {
        test: {
          name: 'unit',
          // Builds run in bubblewrap: installed first when missing (root).
          globalSetup: ['tests/bubblewrap-setup.ts'],
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/expo/**', '**/node_modules/**', ...PROCESS_TESTS],
          // Worker threads that keep one module graph each (poolOptions.threads.isolate below), not
          // a fresh process per file: loading the SDK, drizzle and zod again for each file was
          // most of this project's time. Each file starts (and closes) its own servers.
          pool: 'threads',
          ...fast,
        },
      },
      {
        test: {
          name: 'process',
          include: [...PROCESS_TESTS],
          globalSetup: ['tests/bubblewrap-setup.ts', 'tests/setup/fresh-dist.ts'],
          ...fast,
        },
      },
      {
        test: {
          name: 'expo',
          include: ['tests/expo/**/*.test.ts'],
          globalSetup: ['tests/bubblewrap-setup.ts', 'tests/setup/fresh-dist.ts'],
          // A cold deploy is about 2 min on a quiet machine, the toolchain install (in a hook) 1-2 min.
          testTimeout: 4 * HANG_GUARD_MS,
          hookTimeout: 4 * HANG_GUARD_MS,
        },
      },
    ],
  },
});
