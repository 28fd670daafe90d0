/**
 * One `serve` process's shared parts (docs/cli.md#command-line, docs/performance.md "Start-up time"): its
 * settings, what it has opened, and how it stops. `serve-http.ts` and `serve-stdio.ts` fill it.
 */
import type { App, AppConfig } from '../app.js';
import type { BuildSandbox } from '../builders/process-sandbox.js';
import type { ServeOptions } from '../config/serve-options.js';
import type { Logger } from '../logger.js';
import type { RunningHealthPort } from '../transports/health-server.js';
import type { RunningHttpServer } from '../transports/http-server.js';
import { buildSandboxFor, sandboxLine } from './build-sandbox-choice.js';
import { openHealthPort } from './health-port.js';

/**
 * The listener settings every HTTP listener of one `serve` shares (`--host`, `--body-limit` in
 * bytes, `--allowed-hosts`, `--max-concurrent-requests`).
 */
export interface ServeListenerOptions {
  host: string;
  bodyLimitBytes: number;
  maxConcurrentRequests: number;
  allowedHosts?: string[];
}

/** What a `serve` process has opened so far; `stop` closes what is there. */
interface ServeOpened {
  app?: App;
  http?: RunningHttpServer;
  artifacts?: RunningHttpServer;
  health?: RunningHealthPort;
}

/** One `serve` process: its settings, its open parts, and its stop. */
export interface ServeRun {
  options: ServeOptions;
  logger: Logger;
  /** The app's settings (`appConfigOf`), checked by the builders. */
  config: AppConfig;
  /** The build sandbox found at start; undefined over stdio with the sandbox on (found later, `sandboxNow`). */
  sandbox: BuildSandbox | undefined;
  /** The sandbox found at start, else found now (runs bubblewrap once). @throws Error as `buildSandboxFor`. */
  sandboxNow(): BuildSandbox;
  listener: ServeListenerOptions;
  opened: ServeOpened;
  /** Closes the listeners, the app, then the health port, and exits 0; a second call does nothing. */
  stop(reason: string): Promise<void>;
  /** Opens `--health-port` for `app` when it is set (and records it in `opened`). */
  openHealth(app: App): Promise<void>;
  /** The start-up line's words on where builds run (role api: on workers; else the sandbox). */
  builds(): string;
}

/**
 * Prepares a `serve` run: finds the sandbox now unless this is stdio with the sandbox on (README
 * "Start-up time": bubblewrap runs after the answer to `initialize`), and makes the app's settings
 * with `configOf`. Opens nothing yet.
 * @throws Error as `buildSandboxFor` (HTTP with role all, no sandbox and a builder that runs processes).
 */
export function prepareServeRun(
  options: ServeOptions,
  logger: Logger,
  configOf: (sandbox: BuildSandbox | undefined) => AppConfig,
): ServeRun {
  // An API node builds nothing; the sandbox still confines the preview screenshot's browser. Over
  // stdio it is found on first use (a build, a screenshot) or after the answer to `initialize`,
  // for the start-up line: finding it runs bubblewrap once (docs/performance.md "Start-up time").
  const sandboxChoice = {
    buildSandbox: options.buildSandbox,
    builder: options.builder,
    multiUser: options.http === true && options.role === 'all',
    command: 'serve --http',
  };
  const sandbox = options.http || !options.buildSandbox ? buildSandboxFor(sandboxChoice) : undefined;
  const sandboxNow = () => sandbox ?? buildSandboxFor(sandboxChoice);
  const opened: ServeOpened = {};
  let stopping = false;
  const run: ServeRun = {
    options,
    logger,
    config: configOf(sandbox),
    sandbox,
    sandboxNow,
    listener: {
      host: options.host,
      bodyLimitBytes: options.bodyLimit,
      maxConcurrentRequests: options.maxConcurrentRequests,
      ...(options.allowedHosts && { allowedHosts: options.allowedHosts }),
    },
    opened,
    stop: async (reason) => {
      if (stopping) return;
      stopping = true;
      logger.info({ reason }, 'shutting down');
      await Promise.all([opened.http?.close(), opened.artifacts?.close()]);
      await opened.app?.close();
      await opened.health?.close();
      process.exit(0);
    },
    openHealth: async (app) => {
      if (options.healthPort === undefined) return;
      opened.health = await openHealthPort(app, options.host, options.healthPort);
      logger.info({ health: `${opened.health.url}/healthz`, role: app.role }, 'health port listening');
    },
    builds: () => (options.role === 'api' ? 'builds run on workers (role api)' : sandboxLine(sandboxNow())),
  };
  return run;
}
