/**
 * `mobile-builder-mcp serve [--http] [--role all|api|worker] ...` (docs/cli.md#command-line): MCP
 * over stdio (`serve-stdio.ts`) or streamable HTTP (`serve-http.ts`); `--role worker` runs a
 * worker (`worker.ts`) instead.
 */
import type { Command } from 'commander';
import { checkBuilderSettings } from '../../builders/builder-registry.js';
import { appConfigOf, type ServeOptions } from '../../config/serve-options.js';
import { UsageError } from '../../config/usage-error.js';
import { createLogger } from '../../logger.js';
import type { EarlyStdioStart } from '../early-stdio-start.js';
import { serveHttp } from '../serve-http.js';
import { prepareServeRun } from '../serve-run.js';
import { serveOverStdio } from '../serve-stdio.js';
import { runWorker } from './worker.js';

/**
 * Declares `serve` on `program`; its options come from the settings table (`addSettings` in main.ts).
 * @param early what the early start read and answered of stdin (`early-stdio-start.ts`), for `serve` over stdio.
 */
export function addServeCommand(program: Command, early: EarlyStdioStart | undefined): void {
  program
    .command('serve')
    .description('Serve MCP over stdio (default; what MCP hosts launch) or streamable HTTP (--http).')
    .action(async (options: ServeOptions) => serve(options, early));
}

/**
 * Runs `serve` until a signal or (stdio) the end of stdin stops it.
 * @throws UsageError for `--role worker --http` (exit code 2); Error when the sandbox, the
 *   builder's settings, the store or a listener refuse to start.
 */
async function serve(options: ServeOptions, early: EarlyStdioStart | undefined): Promise<void> {
  if (options.role === 'worker') {
    if (options.http) {
      throw new UsageError(
        'serve --role worker takes no --http: a worker serves no MCP (no stdio, no HTTP listener; --health-port P serves GET /healthz). Drop --http (or SVC_HTTP), or use --role api or all for the MCP side.',
      );
    }
    return runWorker(options);
  }
  const logger = createLogger(options.logLevel);
  const run = prepareServeRun(options, logger, (sandbox) =>
    appConfigOf(options, { logger, sandbox, role: options.role }),
  );
  // The builders' start-up checks: a bad signing key fails at start, not on a phone's first request.
  checkBuilderSettings(run.config);
  process.once('SIGTERM', () => void run.stop('SIGTERM'));
  process.once('SIGINT', () => void run.stop('SIGINT'));
  return options.http ? serveHttp(run) : serveOverStdio(run, early);
}
