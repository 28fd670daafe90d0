/**
 * The health port (`--health-port`, docs/operators.md "Roles"): a small node:http listener for a process
 * that serves no MCP (a worker), or beside a server's own listener. It answers the routes of its
 * table and 404 to anything else; `GET /healthz` is the first route, and a route such as
 * `GET /metrics` mounts beside it by adding to the table the caller passes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One route of the health port: an exact path, answered for GET and HEAD (other methods: 404). */
export interface HealthPortRoute {
  /** The exact path (`/healthz`); the query string is ignored. */
  path: string;
  /** Writes the whole response. */
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** A listening health port. */
export interface RunningHealthPort {
  server: Server;
  /** `http://HOST:PORT` as bound. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * What `GET /healthz` reports: `problem` null means 200 `{"status":"ok", ...identity}`; else 503
 * `{"status":"unavailable","reason":problem, ...identity}`.
 */
export interface HealthCheck {
  /** Fields every answer carries (`role`, `runner`). */
  identity: Record<string, string>;
  /** Why the process cannot take work now (`"starting"`, `"draining"`, `"store_unavailable"`), or null. */
  problem(): Promise<string | null>;
}

/** The `GET /healthz` route of `check`. Never cached (`Cache-Control: no-store`). */
export function healthzRoute(check: HealthCheck): HealthPortRoute {
  return {
    path: '/healthz',
    async handle(_req, res) {
      const problem = await check.problem().catch(() => 'store_unavailable');
      const body =
        problem === null
          ? { status: 'ok', ...check.identity }
          : { status: 'unavailable', reason: problem, ...check.identity };
      sendJson(res, problem === null ? 200 : 503, body);
    },
  };
}

/**
 * Starts the health port on `host`:`port` (0: any free port) with `routes`.
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function startHealthPort(options: {
  host: string;
  port: number;
  routes: readonly HealthPortRoute[];
}): Promise<RunningHealthPort> {
  const routes = new Map(options.routes.map((route) => [route.path, route]));
  // Small bounds: a probe sends one short request; nobody holds this listener open.
  const server = createServer({ headersTimeout: 5_000, requestTimeout: 10_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = routes.get(path);
    if (!route || (req.method !== 'GET' && req.method !== 'HEAD')) return notFound(res);
    Promise.resolve(route.handle(req, res)).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { status: 'error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

function notFound(res: ServerResponse): void {
  sendJson(res, 404, { error: 'not_found' });
}
