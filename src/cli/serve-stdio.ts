/**
 * `serve` over stdio (docs/cli.md#command-line, docs/performance.md "Start-up time"). The protocol first: hosts
 * wait for the answer to `initialize`, which needs neither the store nor the HTTP side. The store
 * opens once that answer is written (or as soon as a message needs it: a first message other than
 * `initialize`), then the preview listener starts. Later messages wait until both are ready, so
 * preview links name the listener's real port. One stdio line is one message: --body-limit bounds
 * it as it bounds an HTTP body. After an early start (`early-stdio-start.ts`) the first line may be
 * answered already: the transport replays it and reads on from the byte after it.
 */
import { createGateway, listenHttp, type App } from '../app.js';
import type { RequestOrigin } from '../auth/request-gate.js';
import { SETTINGS } from '../config/settings.js';
import type { AdmissionPolicy } from '../mcp/request-channel.js';
import type { RunningHttpServer } from '../transports/http-server.js';
import { serveStdio } from '../transports/stdio-server.js';
import { sandboxLine } from './build-sandbox-choice.js';
import type { EarlyStdioStart } from './early-stdio-start.js';
import { openApp, storeShown } from './open-app.js';
import type { ServeRun } from './serve-run.js';
import { warnAboutToken } from './stdio-token-warning.js';

/**
 * Serves MCP on stdin/stdout until stdin closes, then stops the run (the process exits 0).
 * @param early what the early start read and answered of stdin, when it ran.
 * @throws the store's error when it cannot open (stdin is then no longer read; exit code 1).
 */
export async function serveOverStdio(run: ServeRun, early: EarlyStdioStart | undefined): Promise<void> {
  const { options, config, logger } = run;
  const token = process.env[SETTINGS.apiToken.env]?.trim() || undefined;
  const gateway = await createGateway({ logger });
  let opening: Promise<App> | undefined;
  const openNow = (): Promise<App> =>
    (opening ??= (async () => {
      const opened = await openApp({ ...config, gateway });
      run.opened.app = opened;
      await opened.start();
      await warnAboutToken(opened, token, options);
      return opened;
    })());
  let firstReply!: () => void;
  const answered = new Promise<void>((resolve) => (firstReply = resolve));
  let listening!: () => void;
  const listened = new Promise<void>((resolve) => (listening = resolve));
  gateway.whenToolsNeeded(() => void openNow().catch(() => undefined));
  const served = serveStdio(
    { gateway, gate: { policy: (origin) => policyOnceOpen(openNow, origin) }, logger },
    { token, lineLimit: options.bodyLimit, onFirstReply: () => firstReply(), laterMessagesAfter: listened, ...early },
  );
  await Promise.race([answered, served]);
  let opened: App;
  try {
    opened = await openNow();
  } catch (error) {
    // Nothing more is read: the process ends with the reason on stderr (exit code 1).
    process.stdin.destroy();
    early?.input.destroy();
    throw error;
  }
  await run.openHealth(opened);
  const http = await listenForPreviews(run, opened, listening);
  logger.info(
    { previews: http.url, store: storeShown(options), role: opened.role, builder: options.builder },
    'serving MCP over stdio',
  );
  // The messages that waited for the listener are handled first: finding the sandbox runs bubblewrap synchronously.
  await new Promise((resolve) => setImmediate(resolve));
  // One user over stdio: builds may run unconfined, and the operator is told so once.
  const found = run.sandboxNow();
  if (options.role === 'api') logger.info(run.builds());
  else if (found.kind === 'none') logger.warn({ reason: found.reason }, sandboxLine(found));
  else logger.info(sandboxLine(found));
  await served;
  await run.stop('stdin closed');
}

/**
 * stdio: a loopback listener serves the previews, on any free port unless one is set (every host
 * launches its own process: a fixed port would be taken by the first); a busy port set by the
 * operator falls back to any free one. Calls `listening` once it is up or has failed.
 * @throws the listen error other than EADDRINUSE.
 */
async function listenForPreviews(run: ServeRun, app: App, listening: () => void): Promise<RunningHttpServer> {
  const { options, logger, opened } = run;
  try {
    opened.http = await listenHttp(app, { ...run.listener, port: options.port ?? 0, serveMcp: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    opened.http = await listenHttp(app, { ...run.listener, port: 0, serveMcp: false });
    logger.warn(
      { port: options.port, using: opened.http.port },
      'preview port in use; serving previews on another port',
    );
  } finally {
    listening();
  }
  return opened.http;
}

/**
 * The stdio admission policy before the app is open: `initialize` needs no caller over stdio
 * (docs/contract.md), so it is admitted at once; any other message opens the app (if the answer
 * to `initialize` has not already) and is admitted by its request gate.
 */
function policyOnceOpen(open: () => Promise<App>, origin: RequestOrigin): AdmissionPolicy {
  let policy: AdmissionPolicy | undefined;
  return async (method) => {
    if (method === 'initialize') return null;
    policy ??= (await open()).gate.policy(origin);
    return policy(method);
  };
}
