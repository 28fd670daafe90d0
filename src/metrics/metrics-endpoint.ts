/**
 * `GET /metrics` (docs/metrics.md): the access guard and the scrape, as the HTTP pipeline mounts
 * them (`routes.get('/metrics', metricsAccess, serve)`), and both in one handler for a listener
 * without the pipeline (a worker's health port). Refusals are JSON like the server's other HTTP
 * errors: 401 with `WWW-Authenticate: Bearer` when a metrics token is configured and was not
 * presented, 403 when none is configured and the client is not on loopback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_TABLE, MESSAGES, ServiceError, toJsonRpcError } from '../errors.js';
import type { MetricsVerdict } from './metrics-access.js';
import type { ServiceMetrics } from './service-metrics.js';

/** The `/metrics` route's parts, for the HTTP transport and the composition root. */
export interface MetricsEndpoint {
  /** The route's guard: true lets the request through; false means it was answered with 401 or 403. */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Answers a GET or HEAD with the scrape (`text/plain; version=0.0.4`). */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * The whole route in one handler (method check, guard, scrape): what a listener without the HTTP
   * pipeline mounts at `/metrics` (a worker's health port). Other methods get 405.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Counts a request to `/mcp` answered with an HTTP error status (the transport reports them). */
  httpRefused(status: number): void;
}

/** The endpoint of `metrics`, guarded by `access`. */
export function metricsEndpoint(
  metrics: ServiceMetrics,
  access: (req: IncomingMessage) => MetricsVerdict,
): MetricsEndpoint {
  const admit = (req: IncomingMessage, res: ServerResponse): boolean => {
    const verdict = access(req);
    if (verdict === 'ok') return true;
    req.resume();
    if (verdict === 'unauthenticated') {
      refuse(res, new ServiceError('unauthenticated', MESSAGES.unauthenticated, { reason: 'metrics_token_required' }), [
        'WWW-Authenticate',
        'Bearer realm="metrics"',
      ]);
    } else refuse(res, new ServiceError('forbidden', MESSAGES.forbidden, { reason: 'metrics_loopback_only' }), []);
    return false;
  };
  const serve = async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await metrics.scrape();
    res.writeHead(200, [
      'Content-Type',
      metrics.contentType,
      'Content-Length',
      String(Buffer.byteLength(text)),
      'Cache-Control',
      'no-store',
    ]);
    res.end(text);
  };
  return {
    admit,
    serve,
    async handle(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        req.resume();
        res.writeHead(405, ['Allow', 'GET, HEAD', 'Content-Type', 'application/json', 'Cache-Control', 'no-store']);
        res.end(JSON.stringify({ error: 'Method not allowed' }));
        return;
      }
      if (admit(req, res)) await serve(req, res);
    },
    httpRefused: (status) => metrics.httpRefused(status),
  };
}

function refuse(res: ServerResponse, error: ServiceError, headers: string[]): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id: null, error: toJsonRpcError(error) });
  res.writeHead(ERROR_TABLE[error.kind].httpStatus, [
    'Content-Type',
    'application/json',
    'Content-Length',
    String(Buffer.byteLength(text)),
    'Cache-Control',
    'no-store',
    ...headers,
  ]);
  res.end(text);
}
