/**
 * Streamable HTTP transport (docs/cli.md#command-line, docs/contract.md#errors, docs/contract.md#tokens-and-security) on plain `node:http`: `POST /mcp` answers
 * each JSON-RPC message with a JSON body (stateless; no session id, no standalone SSE stream; a
 * request that sends progress notifications is answered as an SSE stream, see `sse-reply.ts`), `GET /healthz`,
 * and the artifact routes. One MCP server serves every request through the gateway, so per-request
 * work is only the request's own work.
 *
 * Every route is mounted in one table with the guards it passes (`listener-routes.ts` over
 * `http-pipeline.ts`; docs/architecture.md "The HTTP pipeline"): a handler never checks Host,
 * Origin or a declared body size.
 *
 * Statuses follow the error table (docs/contract.md#errors); 401 carries `WWW-Authenticate: Bearer`, 429 `Retry-After`,
 * and every authenticated response `X-RateLimit-Limit`, `-Remaining` and `-Reset`. A failure because the store
 * cannot answer now (`store_unavailable`) is 503 with `Retry-After` unless an MCP client gets it in band.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientAddressOf } from '../auth/client-address.js';
import type { RequestGate } from '../auth/request-gate.js';
import type { BuilderRoutes } from '../builders/builder-module.js';
import { DEFAULTS } from '../core/defaults.js';
import { toJsonRpcError, unexpectedFailureStatus } from '../errors.js';
import type { Logger } from '../logger.js';
import type { JsonRpcGateway } from '../mcp/json-rpc-gateway.js';
import type { OAuthRouteDeps, OAuthRoutes } from '../oauth/oauth-routes.js';
import type { Role } from '../roles.js';
import type { ArtifactReader } from '../services/artifact-reader.js';
import type { PublicUrl } from '../services/public-url.js';
import { storeUnavailableReason } from '../store/unavailable.js';
import { artifactHandlers, type ArtifactHandlers } from './artifact-handlers.js';
import { boundConnections } from './connection-bounds.js';
import type { HttpRoutes, RouteDescription } from './http-pipeline.js';
import type { RouteHandler } from '../io/route-guard.js';
import type { OneLook } from './request-turn.js';
import { bindListenerHosts, openListenerHosts, WILDCARD_HOSTS } from './listener-hosts.js';
import { listenerRoutes, type ConsoleRoutes, type MetricsRoute } from './listener-routes.js';
import { notFound, sendJson } from './mcp-replies.js';
import { mcpRoute, RequestSlots } from './mcp-route.js';
import { transportGuards } from './transport-guards.js';

/** Listener settings (docs/cli.md#command-line, docs/contract.md#tokens-and-security; the README hardening). Times in ms, sizes in bytes. */
export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Answer MCP on `/mcp` (false in stdio mode, where the listener serves artifacts only). */
  serveMcp: boolean;
  /**
   * This listener is the artifact origin next to an MCP listener (`--artifact-url`): its bound
   * address becomes the base of artifact links instead of the public URL (see `listenHttp`).
   */
  artifactOrigin?: boolean;
  /** Largest request body, in bytes (default 1 MiB). Larger ones get 413. */
  bodyLimitBytes?: number;
  /** Extra host names accepted in `Host`/`Origin` besides loopback, the bind host and the public URL's host. */
  allowedHosts?: string[];
  /** Time allowed to receive the request headers, in ms (default 10 000). */
  headersTimeoutMs?: number;
  /** Time allowed to receive the whole request, in ms (default 30 000). */
  requestTimeoutMs?: number;
  /** Authenticated MCP requests handled at once; more get 429 with `data.scope = "server"` (default `DEFAULTS.maxConcurrentRequests`, `--max-concurrent-requests`). */
  maxConcurrentRequests?: number;
  /**
   * Requests still being read or authenticated, per user for a request with a valid token, else
   * per client address; more get 429 with `data.scope = "client"` and the connection is closed
   * (default 32).
   */
  maxUnauthenticatedPerAddress?: number;
  /** Open connections in all (default 1024); more are refused by the listener. */
  maxConnections?: number;
  /**
   * Open connections a peer address keeps once half of `maxConnections` are open (default 128;
   * trusted proxies excepted): past it, its new connections are closed as they open, so that one
   * client cannot take every connection of `maxConnections`.
   */
  maxConnectionsPerAddress?: number;
}

/**
 * What the HTTP transport works with: the JSON-RPC gateway, the admission policies, read access to
 * published artifacts, and the public base URLs (read only: the composition root records the bound
 * address, see `listenHttp` in `app.ts`).
 */
export interface HttpServerDeps {
  gateway: Pick<JsonRpcGateway, 'parseHttp' | 'handleValue'>;
  gate: Pick<RequestGate, 'policy' | 'readingKey' | 'admitCaller'>;
  /**
   * The store's `oneLook` (`Store.oneLook`): the `/mcp` requests of one event-loop turn share one
   * look at other processes' commits (`request-turn.ts`). Default: no sharing.
   */
  oneLook?: OneLook;
  /**
   * The client address of a request, for the bounds per client address (`client-address.ts`:
   * behind a trusted proxy, from `X-Forwarded-For`). Default the socket's peer.
   */
  clientAddress?: ClientAddressOf;
  /** Whether a socket peer is a trusted proxy (`--trust-proxy`), exempt from the bound on connections per address. Default none. */
  trustedPeer?: (address: string) => boolean;
  /** Why the service cannot take work now, or null (for `/healthz`). */
  healthProblem(): Promise<string | null>;
  /** What this process does (docs/operators.md "Roles"), named in every `/healthz` answer. Default `all`. */
  role?: Role;
  artifacts: ArtifactReader;
  /** The routes the builders add to this listener (the expo builder's `/updates/...`), from the builder registry. */
  builderRoutes: BuilderRoutes[];
  /**
   * Base URLs of the service and of artifact links, read at each use (no trailing slash), and the
   * project a per-project artifact origin's `Host` names.
   */
  publicUrl: Pick<PublicUrl, 'get' | 'artifacts' | 'projectOfHost'>;
  logger: Logger;
  /**
   * The OAuth authorization server's parts (docs/security.md "Sign in with OAuth"); its routes are loaded
   * (with express) only by a listener that serves `/mcp`. Absent: no OAuth routes.
   */
  oauth?: Omit<OAuthRouteDeps, 'issuer' | 'logger'>;
  /**
   * The web console at `/` (docs/contract.md "Web console"), served by a listener that serves MCP. Its
   * requests pass the same Host/Origin check as `/mcp` first.
   */
  console?: ConsoleRoutes;
  /** `GET /metrics` (docs/metrics.md) on a listener that serves MCP, and the count of `/mcp` refusals. Absent: no metrics. */
  metrics?: MetricsRoute;
}

/** A started listener and how to stop it. */
export interface RunningHttpServer {
  server: Server;
  /** `http://127.0.0.1:PORT` as bound. */
  url: string;
  port: number;
  /** The routing table as mounted: each route's method, path and guards (docs/architecture.md "The HTTP pipeline"). */
  routes: readonly RouteDescription[];
  close(): Promise<void>;
}

/** The query of a URL without one, shared by every such request (not parsed per request); it cannot be changed. */
class EmptyQuery extends URLSearchParams {
  override append(): void {
    throw new TypeError('the shared empty query is read-only');
  }
  override set(): void {
    throw new TypeError('the shared empty query is read-only');
  }
  override delete(): void {
    throw new TypeError('the shared empty query is read-only');
  }
  override sort(): void {
    throw new TypeError('the shared empty query is read-only');
  }
}
const NO_QUERY: URLSearchParams = new EmptyQuery();

/**
 * Starts listening: the guards (`transport-guards.ts`), the routes (`listener-routes.ts`: `/mcp`
 * from `mcp-route.ts`, the artifacts from `artifact-handlers.ts`), the connection bounds
 * (`connection-bounds.ts`), then the host checks of the bound address (`listener-hosts.ts`).
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function startHttpServer(deps: HttpServerDeps, options: HttpServerOptions): Promise<RunningHttpServer> {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes;
  const slots = new RequestSlots(options.maxConcurrentRequests ?? DEFAULTS.maxConcurrentRequests);
  const hosts = openListenerHosts();
  const oauth = await loadOAuthRoutes(deps, options);
  const artifacts = artifactHandlers(deps.artifacts, deps.builderRoutes);
  const routes = listenerRoutes({
    serveMcp: options.serveMcp,
    guards: transportGuards(hosts, deps.publicUrl, bodyLimit),
    mcp: mcpRoute({
      gateway: deps.gateway,
      gate: deps.gate,
      // Requests still being read or authenticated are bounded per user or client address (`mcp-route.ts`).
      clientAddress: deps.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown'),
      publicUrl: deps.publicUrl,
      bodyLimit,
      slots,
      maxUnauthenticated: options.maxUnauthenticatedPerAddress ?? 32,
      oauth: oauth !== undefined,
      oneLook: deps.oneLook ?? ((fn) => fn()),
    }),
    health: healthRoute(deps, options.serveMcp ? slots : undefined),
    metrics: deps.metrics,
    oauth,
    builderRoutes: deps.builderRoutes,
    artifacts,
    console: deps.console,
  });
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Node enforces both timeouts on a timer; check often enough that a slow client is cut near its limit.
  const connectionsCheckingInterval = Math.max(100, Math.min(1000, Math.floor(headersTimeout / 2)));
  // Requests to `/mcp` answered with an HTTP error status (401, 413, 429...), counted once answered.
  const refusals = options.serveMcp ? deps.metrics : undefined;
  const server = createServer(
    { headersTimeout, requestTimeout, connectionsCheckingInterval },
    dispatcher({ deps, routes, artifacts, refusals }),
  );
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  server.maxConnections = options.maxConnections ?? 1024;
  boundConnections(server, {
    maxPerAddress: options.maxConnectionsPerAddress ?? 128,
    trustedPeer: deps.trustedPeer ?? (() => false),
    headersTimeoutMs: headersTimeout,
  });
  await listen(server, options.port, options.host);
  const address = server.address() as AddressInfo;
  bindListenerHosts(hosts, {
    host: options.host,
    allowedHosts: options.allowedHosts,
    publicUrl: deps.publicUrl,
    logger: deps.logger,
  });
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${WILDCARD_HOSTS.has(options.host) ? '127.0.0.1' : shownHost}:${address.port}`,
    port: address.port,
    routes: routes.describe(),
    close: () =>
      new Promise<void>((resolve) => {
        deps.console?.close();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}

/** The OAuth routes of a listener that serves `/mcp`, loaded here, not imported above: the stdio server (no `/mcp` listener) never loads express. */
async function loadOAuthRoutes(deps: HttpServerDeps, options: HttpServerOptions): Promise<OAuthRoutes | undefined> {
  if (!options.serveMcp || !deps.oauth) return undefined;
  const { createOAuthRoutes } = await import('../oauth/oauth-routes.js');
  return createOAuthRoutes({ ...deps.oauth, issuer: () => deps.publicUrl.get(), logger: deps.logger });
}

/**
 * `GET /healthz`: 200 `ok`, or 503 with the reason when no authenticated request could be admitted
 * now (`slots`, on a listener that serves MCP) or the service cannot take work; 404 for other methods.
 */
function healthRoute(
  deps: Pick<HttpServerDeps, 'healthProblem' | 'role'>,
  slots: RequestSlots | undefined,
): RouteHandler {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound(res);
    const problem = slots?.full ? 'request_slots_full' : await deps.healthProblem();
    const role = deps.role ?? 'all';
    if (problem) sendJson(res, 503, { status: 'unavailable', reason: problem, role });
    else sendJson(res, 200, { status: 'ok', role });
  };
}

/** What the request listener dispatches to. */
interface DispatchParts {
  deps: Pick<HttpServerDeps, 'publicUrl' | 'logger'>;
  routes: HttpRoutes;
  artifacts: ArtifactHandlers;
  /** Counts `/mcp` refusals, on a listener that serves MCP with metrics. */
  refusals: MetricsRoute | undefined;
}

/**
 * The request listener: a project's own origin, else the routing table (404 when no route
 * matches); a handler's failure is logged and answered 500, or 503 with `Retry-After` when the
 * store cannot answer now (an outage).
 */
function dispatcher({ deps, routes, artifacts, refusals }: DispatchParts): RequestListener {
  const { logger } = deps;
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // A project's own origin is served by whichever listener artifact links name (the artifact
    // listener, or the only one): its host name is never the console's, which refuses it.
    const projectId = deps.publicUrl.projectOfHost(req.headers.host);
    const routed = projectId
      ? artifacts.ownOrigin(req, res, path, projectId)
      : routes.dispatch(req, res, path, q === -1 ? NO_QUERY : new URLSearchParams(url.slice(q + 1)));
    const work = routed === false ? notFound(res) : routed;
    if (refusals && path === '/mcp') countRefusal(refusals, res, work);
    if (work) {
      work.catch((error: unknown) => {
        const outage = storeUnavailableReason(error);
        if (outage !== undefined)
          logger.warn({ reason: outage, path }, 'HTTP request failed: the database cannot answer now');
        else logger.error({ err: error, path }, 'HTTP request failed');
        if (res.headersSent) return void res.destroy();
        // A store that cannot answer now (an outage): 503 and when to try again, not a bare 500.
        const { status, retryAfterSeconds } = unexpectedFailureStatus(error);
        sendJson(
          res,
          status,
          { jsonrpc: '2.0', id: null, error: toJsonRpcError(error) },
          retryAfterSeconds === undefined ? [] : ['Retry-After', String(retryAfterSeconds)],
        );
      });
    }
  };
}

/** Binds `server` to `host:port`. @throws the listen error (EADDRINUSE, EACCES). */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Reports `res`'s status to the metrics when it is an error (400 and above), once the route's work is done. */
function countRefusal(metrics: MetricsRoute, res: ServerResponse, work: Promise<void> | void): void {
  const count = () => {
    if (res.statusCode >= 400) metrics.httpRefused(res.statusCode);
  };
  if (work) work.then(count, () => undefined);
  else count();
}
