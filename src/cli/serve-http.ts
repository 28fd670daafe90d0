/**
 * `serve --http` (docs/cli.md#command-line): the MCP listener at `/mcp` with the web console, and
 * the artifact origin's listener on the next free port.
 */
import { listenHttp, VERSION, type App } from '../app.js';
import { redactedDatabaseUrl } from '../config/database-url.js';
import { DEFAULTS } from '../core/defaults.js';
import type { RunningHttpServer } from '../transports/http-server.js';
import { openApp, storeShown } from './open-app.js';
import { previewsShown, warnAboutPreviewHosts } from './preview-notices.js';
import type { ServeListenerOptions, ServeRun } from './serve-run.js';

/**
 * Opens the app, the health port, the MCP listener and the artifact listener, then writes the
 * start-up line on stderr. Returns once listening; the listeners keep the process alive.
 * @throws the store's or a listener's error (EADDRINUSE, EACCES).
 */
export async function serveHttp(run: ServeRun): Promise<void> {
  const { options, config, logger, opened } = run;
  const app = await openApp(config);
  opened.app = app;
  await app.start();
  await run.openHealth(app);
  const port = options.port ?? DEFAULTS.port;
  const http = await listenHttp(app, { ...run.listener, port, serveMcp: true });
  opened.http = http;
  // Previews, deployments and updates also get their own origin (the next free port), so a
  // preview may keep its origin (localStorage) without ever sharing one with /mcp.
  const artifacts = await startArtifactListener(app, run.listener, port === 0 ? 0 : http.port + 1);
  opened.artifacts = artifacts;
  logger.info(
    {
      url: `${http.url}/mcp`,
      artifacts: app.publicUrl.artifacts(),
      previews: previewsShown(app),
      store: storeShown(options),
      role: app.role,
      builder: options.builder,
      ...(config.trustProxy && { trustProxy: config.trustProxy }),
    },
    'serving MCP over streamable HTTP',
  );
  warnAboutPreviewHosts(app);
  const database = options.databaseUrl ? `; database: ${redactedDatabaseUrl(options.databaseUrl)}` : '';
  const healthShown = opened.health ? `; health: ${opened.health.url}/healthz` : '';
  process.stderr.write(
    `mobile-builder-mcp ${VERSION} listening on ${http.url}/mcp, artifacts on ${artifacts.url} (web previews: ${previewsShown(app)}; data: ${config.dataDir}${database}${healthShown}); web console: ${http.url}/; ${run.builds()}\n`,
  );
}

/** Starts the artifact origin's listener on `port` or the next free one after it (any, for 0; at most 50 tried). */
async function startArtifactListener(
  app: App,
  listener: ServeListenerOptions,
  port: number,
): Promise<RunningHttpServer> {
  for (let candidate = port; ; candidate++) {
    try {
      return await listenHttp(app, { ...listener, port: candidate, serveMcp: false, artifactOrigin: true });
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code !== 'EADDRINUSE' ||
        port === 0 ||
        candidate >= port + 50 ||
        candidate >= 65535
      )
        throw error;
    }
  }
}
