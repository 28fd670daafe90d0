/**
 * Which test files are process tests. A unit test runs our code from `src/` inside the vitest
 * worker (a real server on port 0, real SQLite, real SDK clients; a builder may start short shell
 * commands); a process test starts something else: the built bin (`bin/` -> `dist/`), headless
 * Chromium, a PostgreSQL server, or a third-party process (a client, drizzle-kit). `vitest.config.ts` makes the `unit` project of every
 * other file under `tests/` (but `tests/expo/`) and the `process` project of these, and
 * `tests/test-kinds.test.ts` refuses a unit test that spawns the bin or a browser.
 */

/** Process tests, as paths from the repository root (the order does not matter). */
export const PROCESS_TESTS: readonly string[] = [
  // The built bin over stdio and HTTP, and its CLI commands.
  'tests/anonymous-bound.test.ts',
  'tests/bin-http.test.ts',
  'tests/build-sandbox.test.ts',
  'tests/bin-stdio.test.ts',
  'tests/runtime-and-sdks.test.ts',
  'tests/elicitation-stdio.test.ts',
  'tests/metrics-bin.test.ts',
  'tests/body-limit.test.ts',
  'tests/max-concurrent-requests.test.ts',
  'tests/code-cache.test.ts',
  'tests/stdio-startup.test.ts',
  'tests/console/console-sessions-cli.test.ts',
  'tests/crash-recovery.test.ts',
  'tests/session-cache-processes.test.ts',
  'tests/hardening.test.ts',
  'tests/host-loop.test.ts',
  'tests/host-timeouts.test.ts',
  'tests/install-channels.test.ts',
  'tests/install-tarball.test.ts',
  'tests/leases.test.ts',
  'tests/limits-shared.test.ts',
  'tests/operator-messages.test.ts',
  'tests/protocol-eras.test.ts',
  'tests/roles.test.ts',
  'tests/oauth/flow.test.ts',
  'tests/oauth/oauth-server.test.ts',
  'tests/token-revoke-bin.test.ts',
  'tests/project-env-bin.test.ts',
  // Headless Chromium.
  'tests/preview-screenshot.test.ts',
  'tests/card/app-card.test.ts',
  'tests/screenshot-network.test.ts',
  'tests/console/console-browser.test.ts',
  'tests/console/console-follow.test.ts',
  'tests/console/console-queue.test.ts',
  'tests/console/origins-browser.test.ts',
  'tests/console/question-prompt-layout.test.ts',
  'tests/console/console-host.test.ts',
  'tests/oauth/consent-browser.test.ts',
  // mcp-remote, a third-party stdio proxy, as a child process.
  'tests/mcp-remote.test.ts',
  'tests/oauth/mcp-remote-oauth.test.ts',
  // Child processes that load a built module of dist/.
  'tests/limits/pg-rate-limiter.test.ts',
  // The session card's build (scripts/build-card.mjs: esbuild passes of a minute on a busy machine).
  'tests/card/card-build-linked.test.ts',
  // npm (the expo toolchain's install, against an unreachable registry).
  'tests/expo-toolchain-offline.test.ts',
  // A PostgreSQL server (the tests' throwaway cluster, tests/setup/postgres.ts) or drizzle-kit.
  'tests/store/contract.test.ts',
  'tests/health-events.test.ts',
  'tests/answers-across-nodes.test.ts',
  'tests/reply-memo.test.ts',
  'tests/store/migrations-current.test.ts',
  'tests/store/pg-blob-store.test.ts',
  'tests/store/pg-migrate.test.ts',
  'tests/store/pg-test-setup.test.ts',
  'tests/store/update-channels.test.ts',
  'tests/store/builders-and-nodes.test.ts',
  'tests/blob-artifacts.test.ts',
  'tests/workspace-sync.test.ts',
  // API nodes and build workers of the built bin on one PostgreSQL database.
  'tests/multinode/cross-node.test.ts',
  'tests/multinode/limits-across-nodes.test.ts',
  'tests/multinode/node-failures.test.ts',
  'tests/multinode/workspaces-across-workers.test.ts',
  'tests/multinode/exact-bounds.test.ts',
  'tests/multinode/one-builder.test.ts',
  'tests/multinode/send-retries.test.ts',
  'tests/multinode/database-restart.test.ts',
  'tests/multinode/worker-event-loop.test.ts',
  'tests/engine-pg-claims.test.ts',
  'tests/reaper-reads.test.ts',
];

/** What a unit test must not contain: it starts the bin, a browser, a database server or a third-party process. */
export const PROCESS_MARKERS: readonly RegExp[] = [
  /bin-helpers\.js/,
  /\bBIN\b/,
  /chromium\.js/,
  /launchChromium/,
  /mcp-remote\/dist/,
  /'\/usr\/bin\/chromium'/,
  /pg-database\.js/,
  /drizzle-kit/,
  /npm_config_registry/,
];
