/**
 * `mobile-builder-mcp worker` (and `serve --role worker`), docs/operators.md "Roles": a build worker. It
 * opens the store, runs the engine and the builder (claims, leases, the reaper), and serves no
 * MCP at all: it reads no stdin and listens on no port but the optional health port. Once it takes
 * work it prints `mobile-builder-mcp <version> worker <runner id> ready (...)` on stderr.
 *
 * SIGTERM or SIGINT drains it (docs/workflows.md#draining): it claims nothing more (`/healthz`
 * 503 `draining`), releases workflows waiting for input, lets running builds finish for up to
 * `--drain-timeout-ms`, then interrupts what still runs, closes the store and exits 0. A second
 * signal skips the rest of the wait.
 */
import type { Command } from 'commander';
import { VERSION } from '../../app.js';
import { checkBuilderSettings } from '../../builders/builder-registry.js';
import { appConfigOf, type WorkerOptions } from '../../config/serve-options.js';
import { createLogger } from '../../logger.js';
import type { RunningHealthPort } from '../../transports/health-server.js';
import { buildSandboxFor, sandboxLine } from '../build-sandbox-choice.js';
import { openHealthPort } from '../health-port.js';
import { openApp, storeShown } from '../open-app.js';

/** Declares `worker` on `program`; its options come from the settings table (`addSettings` in main.ts). */
export function addWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run a build worker: claims and builds workflows from the store (PostgreSQL with --database-url; or a SQLite data dir shared with serve --role api on one host), serves no MCP. ' +
        'SIGTERM drains it: running builds finish (up to --drain-timeout-ms), then it exits.',
    )
    .action(async (options: WorkerOptions) => runWorker(options));
}

/**
 * Runs a worker (also `serve --role worker`) until a signal has drained and stopped it (then the process exits 0).
 * @throws Error when the sandbox, the builder's settings or the store refuse to start.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const logger = createLogger(options.logLevel);
  const sandbox = buildSandboxFor({
    buildSandbox: options.buildSandbox,
    builder: options.builder,
    multiUser: true,
    command: 'a worker',
  });
  const config = appConfigOf(options, { logger, sandbox, role: 'worker' });
  checkBuilderSettings(config);
  const app = await openApp(config);
  // Nothing else keeps the process alive: the engine's timers do not, and no MCP listener exists.
  const keepAlive = setInterval(() => undefined, 1 << 30);

  let health: RunningHealthPort | undefined;
  let finished: Promise<void> | undefined;
  const finish = () =>
    (finished ??= (async () => {
      await app.close();
      await health?.close();
      clearInterval(keepAlive);
      logger.info('worker stopped');
      process.exit(0);
    })());
  // Started before the signal handlers are set (in the same turn), so a signal waits for it.
  const started = (async () => {
    // Before the engine starts, so that a probe sees 503 `starting` rather than a refused connection.
    if (options.healthPort !== undefined) health = await openHealthPort(app, options.host, options.healthPort);
    await app.start();
  })();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: interrupting the running builds now');
      void finish();
      return;
    }
    logger.info(
      { signal, drainTimeoutMs: options.drainTimeoutMs },
      'draining: claiming nothing more, letting running builds finish',
    );
    // A signal during start-up drains once the engine has started (it has claimed nothing yet).
    void started
      .catch(() => undefined)
      .then(() => app.drain(options.drainTimeoutMs))
      .then(finish);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    await started;
  } catch (error) {
    clearInterval(keepAlive);
    await health?.close();
    await app.close().catch(() => undefined);
    throw error;
  }
  if (signals > 0) return;
  const where = storeShown(options);
  logger.info(
    {
      runner: app.engine.runnerId,
      builder: options.builder,
      slots: options.maxConcurrentWorkflows,
      store: where,
      ...(health && { health: `${health.url}/healthz` }),
    },
    'worker ready',
  );
  const healthShown = health ? `; health ${health.url}/healthz` : '';
  process.stderr.write(
    `mobile-builder-mcp ${VERSION} worker ${app.engine.runnerId} ready (builder ${options.builder}, ${options.maxConcurrentWorkflows} at once; ${where}${healthShown}; ${sandboxLine(sandbox)})\n`,
  );
}
