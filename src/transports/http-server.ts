/**
 * Streamable HTTP transport (docs/cli.md#command-line, docs/contract.md#errors, docs/contract.md#tokens-and-security) on plain `node:http`: `POST /mcp` answers
 * each JSON-RPC message with a JSON body (stateless; no session id, no standalone SSE stream; a
 * request that sends progress notifications is answered as an SSE stream, see `sse-reply.ts`), `GET /healthz`,
 * and the artifact routes. One MCP server serves every request through the gateway, so per-request
 * work is only the request's own work.
 *
 * Every route is mounted in one table with the guards it passes (`http-pipeline.ts`;
 * docs/architecture.md "The HTTP pipeline"): a handler never checks Host, Origin or a declared body size.
 *
 * Statuses follow the error table (docs/contract.md#errors); 401 carries `WWW-Authenticate: Bearer`, 429 `Retry-After`,
 * and every authenticated response `X-RateLimit-Limit`, `-Remaining` and `-Reset`. A failure because the store
 * cannot answer now (`store_unavailable`) is 503 with `Retry-After` unless an MCP client gets it in band.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientAddressOf } from '../auth/client-address.js';
import type { RequestGate } from '../auth/request-gate.js';
import { DEFAULTS } from '../core/defaults.js';
import { forbidden, invalidRequest, rateLimited, toJsonRpcError, unexpectedFailureStatus } from '../errors.js';
import { storeUnavailableReason } from '../store/unavailable.js';
import type { RateDecision } from '../limits/request-rate-limiter.js';
import type { Logger } from '../logger.js';
import type { JsonRpcGateway } from '../mcp/json-rpc-gateway.js';
import type { ArtifactReader } from '../services/artifact-reader.js';
import type { PublicUrl } from '../services/public-url.js';
import { artifactIdOf, serveArtifact } from './artifact-routes.js';
import { SlotReleases } from './slot-releases.js';
import { sseReplyChannel } from './sse-reply.js';
import { bearerToken, PROTOCOL_VERSIONS, mcpClient, protocolHeaders, resourceMetadataUrl, rateHeaders, sendReply, isArtifactPath, notFound, refuseMcpMethod, bodyTooLarge, sendError, sendJson } from './mcp-replies.js';
import { formFromOwnOrigin } from './form-origin.js';
import { createHostCheck, type HostVerdict } from './host-check.js';
import { guard, HttpRoutes, type Guard, type RouteDescription, type RouteHandler } from './http-pipeline.js';
import { BODY_ABORTED, BODY_TOO_LARGE, readBody } from '../io/request-body.js';
import { isLoopbackHostname, LOOPBACK_HOSTNAMES } from '../io/loopback-hosts.js';
import type { OAuthRouteDeps, OAuthRoutes } from '../oauth/oauth-routes.js';
import type { BuilderRoutes } from '../builders/builder-module.js';
import type { Role } from '../roles.js';

/** Listener settings (docs/cli.md#command-line, docs/contract.md#tokens-and-security). Times in ms, sizes in bytes. */
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
  /** Authenticated MCP requests handled at once; more get 429 with `data.scope = "server"` (default 256). */
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
  gateway: Pick<JsonRpcGateway, 'handleText' | 'answerNow'>;
  gate: Pick<RequestGate, 'policy' | 'readingKey' | 'readingKeyNow' | 'admitNow'>;
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
   * The web console at `/` (docs/console.md "Web console"), served by a listener that serves MCP. Its
   * requests pass the same Host/Origin check as `/mcp` first.
   */
  console?: ConsoleRoutes;
  /** `GET /metrics` (docs/metrics.md) on a listener that serves MCP, and the count of `/mcp` refusals. Absent: no metrics. */
  metrics?: MetricsRoute;
}

/** The metrics endpoint as the routing table sees it (`metrics/metrics-endpoint.ts`). */
interface MetricsRoute {
  /** The route's guard (loopback, the metrics token, or open): true lets the request through; false means it was answered. */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Answers with the scrape. */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Counts a request to `/mcp` answered with an HTTP error status. */
  httpRefused(status: number): void;
}

/** The web console as the routing table sees it. */
interface ConsoleRoutes {
  /** Its routes (a path, exact or a prefix ending in `*`, its own guards, its handler), mounted behind the host check and form origin. */
  routes: ReadonlyArray<{ path: string; guards: readonly Guard[]; handler: RouteHandler }>;
  /** Ends the console's open event streams. */
  close(): void;
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
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/**
 * Starts listening.
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function startHttpServer(deps: HttpServerDeps, options: HttpServerOptions): Promise<RunningHttpServer> {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes;
  const maxConcurrent = options.maxConcurrentRequests ?? 256;
  const { logger } = deps;
  let inFlight = 0;
  let hostCheck: ReturnType<typeof createHostCheck> = () => 'ok';
  // Artifact routes also answer for the artifact base's own host name (`--artifact-url`).
  let artifactHostCheck: ReturnType<typeof createHostCheck> = () => 'ok';

  // Requests still being read or authenticated, per user (valid token) or client address (none):
  // anonymous clients cannot fill the server's request slots, which are taken only once a caller
  // is known, nor lock out the users behind the same proxy.
  const clientAddress = deps.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  const unauthenticated = new Map<string, number>();
  const slotReleases = new SlotReleases();
  const maxUnauthenticated = options.maxUnauthenticatedPerAddress ?? 32;

  // `POST /mcp` after its guards (host check, protocol version, declared body size): the body is
  // read within the bound on requests being read, then each JSON-RPC message is authenticated and
  // rate limited by the gateway's admission (per message: `initialize` and discovery need no token).
  const handleMcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const version = req.headers['mcp-protocol-version'];
    const address = clientAddress(req);
    const token = bearerToken(req.headers.authorization);
    const reading = deps.gate.readingKeyNow(token, address) ?? (await deps.gate.readingKey(token, address));
    const readingKey = reading.key;
    const pending = unauthenticated.get(readingKey) ?? 0;
    if (pending >= maxUnauthenticated) {
      res.setHeader('Retry-After', '1');
      res.setHeader('Connection', 'close');
      return sendError(res, rateLimited({ scope: 'client', limit: maxUnauthenticated, retryAfterSeconds: 1 }));
    }
    unauthenticated.set(readingKey, pending + 1);
    const body = await readBody(req, bodyLimit);
    const left = (unauthenticated.get(readingKey) ?? 1) - 1;
    if (left <= 0) unauthenticated.delete(readingKey);
    else unauthenticated.set(readingKey, left);
    if (body === BODY_ABORTED) return;
    if (body === BODY_TOO_LARGE) return bodyTooLarge(res, bodyLimit);

    // The fast path (docs/performance.md "Performance"): a tool call whose answer and admission are at hand is
    // answered now, with the reply the full path below would give; it holds no request slot (it
    // never waits), and a full server sends it the full path, which refuses it.
    const caller = reading.caller;
    if (caller && inFlight < maxConcurrent) {
      const now = deps.gateway.answerNow(body, caller, (method) => deps.gate.admitNow(caller, method));
      if (now) {
        if (!res.destroyed) sendReply(res, now, true, mcpClient(version), null);
        return;
      }
    }

    // A request slot is taken once the caller is authenticated, and given back when the reply is
    // sent or the client goes away, whichever comes first.
    let holding = false;
    const release = () => {
      if (holding) {
        holding = false;
        inFlight--;
      }
    };
    // One close listener per connection, not per request (slot-releases.ts).
    slotReleases.hold(req.socket, release);
    const policy = deps.gate.policy({ transport: 'http', token, address, caller: reading.caller });
    let rate: RateDecision | undefined;
    const admit = async (method: string) => {
      const admission = await policy(method);
      if (inFlight >= maxConcurrent) throw rateLimited({ scope: 'server', limit: maxConcurrent, retryAfterSeconds: 1 });
      inFlight++;
      holding = true;
      rate = admission?.rate;
      return admission;
    };
    // Progress notifications turn the reply into an SSE stream for a client that accepts one
    // (sse-reply.ts); the stream's headers carry the rate window like any other answer.
    const channel = sseReplyChannel(req, res, () => rateHeaders(rate));
    try {
      const reply = await deps.gateway.handleText(body, admit, protocolHeaders(req), channel);
      if (channel.streaming) channel.finish(reply.body);
      else if (!res.destroyed) sendReply(res, reply, token !== undefined, mcpClient(version), oauthRoutes ? resourceMetadataUrl(deps.publicUrl.get()) : null);
    } finally {
      slotReleases.drop(req.socket, release);
      release();
    }
  };

  // Loaded here, not imported above: the stdio server (no `/mcp` listener) never loads express.
  let oauthRoutes: OAuthRoutes | undefined;
  if (options.serveMcp && deps.oauth) {
    const { createOAuthRoutes } = await import('../oauth/oauth-routes.js');
    oauthRoutes = createOAuthRoutes({ ...deps.oauth, issuer: () => deps.publicUrl.get(), logger });
  }

  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Node enforces both timeouts on a timer; check often enough that a slow client is cut near its limit.
  const connectionsCheckingInterval = Math.max(100, Math.min(1000, Math.floor(headersTimeout / 2)));
  // The guards (docs/architecture.md "The HTTP pipeline"). A refusal reads and drops the body.
  const refuse = (req: IncomingMessage, res: ServerResponse, verdict: HostVerdict): boolean => {
    if (verdict === 'ok') return true;
    req.resume();
    sendError(res, forbidden({ reason: verdict }));
    return false;
  };
  /** `Host`, and `Origin` when sent, name this server (DNS rebinding, host-check.ts). */
  const hostAndOrigin = guard('hostCheck', (req, res) => refuse(req, res, hostCheck(req.headers.host, req.headers.origin)));
  /** `Host` only: browsers and web-based MCP hosts call the OAuth routes cross-origin (CORS). */
  const hostOnly = guard('hostCheck(Host only)', (req, res) => refuse(req, res, hostCheck(req.headers.host, undefined)));
  /** `Host` names this server or the artifact base (`--artifact-url`). */
  const artifactHost = guard('artifactHostCheck', (req, res) => refuse(req, res, artifactHostCheck(req.headers.host, undefined)));
  /** A form that changes something (any method but GET and HEAD) comes from this server's own origin (form-origin.ts). */
  const formOrigin = guard('formOrigin', (req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD' || formFromOwnOrigin(req.headers.origin, req.headers.host, deps.publicUrl.get())) return true;
    return refuse(req, res, 'origin_not_allowed');
  });
  /** MCP streamable HTTP: a client names the negotiated version on every request after initialize; an unknown one is 400. */
  const protocolVersion = guard('protocolVersion', (req, res) => {
    const version = req.headers['mcp-protocol-version'];
    if (typeof version !== 'string' || PROTOCOL_VERSIONS.includes(version)) return true;
    sendError(res, invalidRequest({ reason: 'unsupported MCP-Protocol-Version', supported: PROTOCOL_VERSIONS }));
    return false;
  });
  /** A declared `Content-Length` over the limit is 413 before anything is read (the reader refuses a longer streamed body). */
  const bodyLimitGuard = guard('bodyLimit', (req, res) => {
    const declared = Number(req.headers['content-length']);
    if (!Number.isFinite(declared) || declared <= bodyLimit) return true;
    req.resume();
    bodyTooLarge(res, bodyLimit);
    return false;
  });

  // The routing table: each route names its guards where it is mounted; the first route whose
  // method and path match serves (exact paths before prefixes ending in `*`).
  const routes = new HttpRoutes();
  if (options.serveMcp) {
    routes.post('/mcp', hostAndOrigin, protocolVersion, bodyLimitGuard, handleMcp);
    routes.all('/mcp', (_req, res) => refuseMcpMethod(res));
  }
  routes.all('/healthz', (req, res) => handleHealth(req, res));
  if (options.serveMcp && deps.metrics) {
    const metrics = deps.metrics;
    routes.get('/metrics', hostAndOrigin, guard('metricsAccess', (req, res) => metrics.admit(req, res)), (req, res) => metrics.serve(req, res));
  }
  if (oauthRoutes) {
    const oauth = oauthRoutes;
    // The consent decision is the person's form: from this server's own page only.
    routes.all('/authorize/consent', hostOnly, formOrigin, (req, res) => oauth.handle(req, res));
    for (const path of oauth.paths) if (path !== '/authorize/consent') routes.all(path, hostOnly, (req, res) => oauth.handle(req, res));
  }
  // The routes builders declare (the expo builder's Expo Updates protocol), on the artifact host.
  for (const route of deps.builderRoutes.flatMap((mounted) => mounted.routes)) routes.all(route.path, artifactHost, (req, res, path, query) => route.handle(req, res, path, query));
  routes.all('/previews/*', artifactHost, (req, res, path) => handleArtifact(req, res, path));
  routes.all('/deployments/*', artifactHost, (req, res, path) => handleArtifact(req, res, path));
  if (options.serveMcp && deps.console) {
    for (const route of deps.console.routes) routes.all(route.path, hostAndOrigin, formOrigin, ...route.guards, route.handler);
  }

  const handleHealth = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound(res);
    // Unhealthy when no authenticated request could be admitted now, or the store does not answer.
    const problem = options.serveMcp && inFlight >= maxConcurrent ? 'request_slots_full' : await deps.healthProblem();
    const role = deps.role ?? 'all';
    if (problem) sendJson(res, 503, { status: 'unavailable', reason: problem, role });
    else sendJson(res, 200, { status: 'ok', role });
  };

  // A builder's page in place of an artifact's files (the expo builder's deployment landing page).
  const builderLanding = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    for (const mounted of deps.builderRoutes) if (mounted.landing && (await mounted.landing(req, res, path))) return true;
    return false;
  };

  // On the shared host every artifact page runs in an opaque origin: tenants never share one.
  const handleArtifact = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (await builderLanding(req, res, path)) return;
    await serveArtifact(deps.artifacts, req, res, path, { ownOrigin: false });
  };

  // A project's own origin (`<project-id>.localhost:<port>` on the artifact listener): that
  // project's previews and deployments alone, keeping their origin (localStorage); nothing else.
  const handleProjectOrigin = async (req: IncomingMessage, res: ServerResponse, path: string, projectId: string): Promise<void> => {
    if (!isArtifactPath(path)) return notFound(res);
    const id = artifactIdOf(path);
    if (id && (await deps.artifacts.find(id))?.projectId !== projectId) return notFound(res);
    if (await builderLanding(req, res, path)) return;
    await serveArtifact(deps.artifacts, req, res, path, { ownOrigin: true, projectId });
  };

  // Requests to `/mcp` answered with an HTTP error status (401, 413, 429...), counted once answered.
  const refusals = options.serveMcp ? deps.metrics : undefined;
  const server = createServer({ headersTimeout, requestTimeout, connectionsCheckingInterval }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // A project's own origin is served by whichever listener artifact links name (the artifact
    // listener, or the only one): its host name is never the console's, which refuses it.
    const projectId = deps.publicUrl.projectOfHost(req.headers.host);
    const routed = projectId ? handleProjectOrigin(req, res, path, projectId) : routes.dispatch(req, res, path, q === -1 ? NO_QUERY : new URLSearchParams(url.slice(q + 1)));
    const work = routed === false ? notFound(res) : routed;
    if (refusals && path === '/mcp') countRefusal(refusals, res, work);
    if (work) {
      work.catch((error: unknown) => {
        const outage = storeUnavailableReason(error);
        if (outage !== undefined) logger.warn({ reason: outage, path }, 'HTTP request failed: the database cannot answer now');
        else logger.error({ err: error, path }, 'HTTP request failed');
        if (res.headersSent) return void res.destroy();
        // A store that cannot answer now (an outage): 503 and when to try again, not a bare 500.
        const { status, retryAfterSeconds } = unexpectedFailureStatus(error);
        sendJson(res, status, { jsonrpc: '2.0', id: null, error: toJsonRpcError(error) }, retryAfterSeconds === undefined ? [] : ['Retry-After', String(retryAfterSeconds)]);
      });
    }
  });
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  server.maxConnections = options.maxConnections ?? 1024;
  // Connections per peer address, under pressure: once half of maxConnections are open, a peer
  // that holds its share (maxConnectionsPerAddress) gets no more, so one client (a flood of
  // half-sent requests, each held until the header timeout) cannot take every connection and lock
  // everyone out, while a busy client below that pressure is never cut.
  const maxPerAddress = options.maxConnectionsPerAddress ?? 128;
  const pressure = Math.floor(server.maxConnections / 2);
  const trustedPeer = deps.trustedPeer ?? (() => false);
  const connectionsOf = new Map<string, number>();
  let openConnections = 0;
  server.on('connection', (socket) => {
    const peer = socket.remoteAddress;
    const open = peer ? (connectionsOf.get(peer) ?? 0) : 0;
    if (peer && open >= maxPerAddress && openConnections >= pressure && !trustedPeer(peer)) {
      socket.destroy();
      return;
    }
    openConnections++;
    if (peer) connectionsOf.set(peer, open + 1);
    socket.once('close', () => {
      openConnections--;
      if (!peer) return;
      const left = (connectionsOf.get(peer) ?? 1) - 1;
      if (left <= 0) connectionsOf.delete(peer);
      else connectionsOf.set(peer, left);
    });
  });
  // A connection that never sends a byte is closed after the header timeout, like a slow one.
  server.on('connection', (socket) => {
    const idle = setTimeout(() => socket.destroy(), headersTimeout);
    idle.unref();
    socket.once('data', () => clearTimeout(idle));
    socket.once('close', () => clearTimeout(idle));
  });
  // Malformed requests and slow clients (header or request timeout): answer if we still can, then drop the connection.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const status =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const response = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !response?.headersSent) {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
    } else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  if (WILDCARD_HOSTS.has(options.host) && !options.allowedHosts?.length) {
    logger.warn({ host: options.host }, 'HTTP bound to every interface without --allowed-hosts: Host/Origin checks are off. Put it behind a proxy or pass --allowed-hosts.');
  } else {
    // The public URL's host is allowed too; it is known once the composition root has recorded the
    // bound address, so the check follows it.
    const fixed = [...LOOPBACK_HOSTNAMES, options.host, ...(options.allowedHosts ?? [])].filter((h) => !WILDCARD_HOSTS.has(h));
    let checkedBase = '';
    let check = createHostCheck(fixed);
    hostCheck = (host, origin) => {
      const base = deps.publicUrl.get();
      if (base !== checkedBase) {
        checkedBase = base;
        check = createHostCheck([...fixed, new URL(base).hostname]);
      }
      return check(host, origin);
    };
    let checkedArtifactBase = '';
    let artifactCheck = createHostCheck(fixed);
    artifactHostCheck = (host, origin) => {
      const base = `${deps.publicUrl.get()} ${deps.publicUrl.artifacts()}`;
      if (base !== checkedArtifactBase) {
        checkedArtifactBase = base;
        artifactCheck = createHostCheck([...fixed, new URL(deps.publicUrl.get()).hostname, new URL(deps.publicUrl.artifacts()).hostname]);
      }
      return artifactCheck(host, origin);
    };
    if (!isLoopbackHostname(options.host)) logger.warn({ host: options.host }, 'HTTP is bound to a non-loopback address: anyone who can reach it can try tokens.');
  }

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

/** Reports `res`'s status to the metrics when it is an error (400 and above), once the route's work is done. */
function countRefusal(metrics: MetricsRoute, res: ServerResponse, work: Promise<void> | void): void {
  const count = () => {
    if (res.statusCode >= 400) metrics.httpRefused(res.statusCode);
  };
  if (work) work.then(count, () => undefined);
  else count();
}
