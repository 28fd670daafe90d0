/**
 * The routing table of one HTTP listener (docs/architecture.md "The HTTP pipeline"): each route
 * names its guards where it is mounted; the first route whose method and path match serves (exact
 * paths before prefixes ending in `*`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BuilderRoutes } from '../builders/builder-module.js';
import type { OAuthRoutes } from '../oauth/oauth-routes.js';
import type { ArtifactHandlers } from './artifact-handlers.js';
import { guard, type Guard, type RouteHandler } from '../io/route-guard.js';
import { HttpRoutes } from './http-pipeline.js';
import { refuseMcpMethod } from './mcp-replies.js';
import type { TransportGuards } from './transport-guards.js';

/** The metrics endpoint as the routing table sees it (`metrics/metrics-endpoint.ts`). */
export interface MetricsRoute {
  /** The route's guard (loopback, the metrics token, or open): true lets the request through; false means it was answered. */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Answers with the scrape. */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Counts a request to `/mcp` answered with an HTTP error status. */
  httpRefused(status: number): void;
}

/** The web console as the routing table sees it. */
export interface ConsoleRoutes {
  /** Its routes (a path, exact or a prefix ending in `*`, its own guards, its handler), mounted behind the host check and form origin. */
  routes: ReadonlyArray<{ path: string; guards: readonly Guard[]; handler: RouteHandler }>;
  /** Ends the console's open event streams. */
  close(): void;
}

/** What one listener mounts; the MCP side (`/mcp`, `/metrics`, OAuth, the console) only when `serveMcp`. */
export interface ListenerRouteParts {
  serveMcp: boolean;
  guards: TransportGuards;
  /** `POST /mcp` after its guards (`mcp-route.ts`). */
  mcp: RouteHandler;
  /** `/healthz`. */
  health: RouteHandler;
  metrics?: MetricsRoute | undefined;
  /** The OAuth routes, loaded only by a listener that serves `/mcp`. */
  oauth?: OAuthRoutes | undefined;
  /** The routes builders declare (the expo builder's Expo Updates protocol), on the artifact host. */
  builderRoutes: readonly BuilderRoutes[];
  artifacts: ArtifactHandlers;
  console?: ConsoleRoutes | undefined;
}

/** Mounts the listener's routes, in the order they are matched and listed (`RunningHttpServer.routes`). */
export function listenerRoutes(parts: ListenerRouteParts): HttpRoutes {
  const { guards, serveMcp } = parts;
  const routes = new HttpRoutes();
  if (serveMcp) {
    routes.post('/mcp', guards.hostAndOrigin, guards.protocolVersion, guards.bodyLimit, parts.mcp);
    routes.all('/mcp', (_req, res) => refuseMcpMethod(res));
  }
  routes.all('/healthz', parts.health);
  const { metrics, oauth } = parts;
  if (serveMcp && metrics) {
    routes.get(
      '/metrics',
      guards.hostAndOrigin,
      guard('metricsAccess', (req, res) => metrics.admit(req, res)),
      (req, res) => metrics.serve(req, res),
    );
  }
  if (oauth) {
    // The consent decision is the person's form: from this server's own page only.
    routes.all('/authorize/consent', guards.hostOnly, guards.formOrigin, (req, res) => oauth.handle(req, res));
    for (const path of oauth.paths)
      if (path !== '/authorize/consent') routes.all(path, guards.hostOnly, (req, res) => oauth.handle(req, res));
  }
  for (const route of parts.builderRoutes.flatMap((mounted) => mounted.routes))
    routes.all(route.path, guards.artifactHost, (req, res, path, query) => route.handle(req, res, path, query));
  routes.all('/previews/*', guards.artifactHost, (req, res, path) => parts.artifacts.shared(req, res, path));
  routes.all('/deployments/*', guards.artifactHost, (req, res, path) => parts.artifacts.shared(req, res, path));
  routes.all('/exports/*', guards.artifactHost, (req, res, path) => parts.artifacts.shared(req, res, path));
  if (serveMcp && parts.console) {
    for (const route of parts.console.routes)
      routes.all(route.path, guards.hostAndOrigin, guards.formOrigin, ...route.guards, route.handler);
  }
  return routes;
}
