/**
 * The health port of a process (`--health-port`, docs/operators.md "Roles"): its routes table. `GET /healthz`
 * is the first route; `GET /metrics` mounts beside it, in `healthPortRoutes`.
 */
import type { App } from '../app.js';
import {
  healthzRoute,
  startHealthPort,
  type HealthPortRoute,
  type RunningHealthPort,
} from '../transports/health-server.js';

/**
 * The routes of `app`'s health port: `GET /healthz` (200 `{"status":"ok","role","runner"}` once
 * the process takes work and the store answers; 503 `{"status":"unavailable","reason",...}` while
 * it starts, drains or loses the store). Another route of the port (`GET /metrics`) is added here.
 */
function healthPortRoutes(app: App): HealthPortRoute[] {
  const routes = [
    healthzRoute({ identity: { role: app.role, runner: app.engine.runnerId }, problem: () => app.healthProblem() }),
  ];
  // The same guard as on the MCP listener: loopback, `--metrics-token`, or `--metrics-public` (docs/metrics.md).
  const { metrics } = app;
  if (metrics) routes.push({ path: '/metrics', handle: (req, res) => metrics.handle(req, res) });
  return routes;
}

/**
 * Starts `app`'s health port on `host`:`port` (0: any free port).
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export function openHealthPort(app: App, host: string, port: number): Promise<RunningHealthPort> {
  return startHealthPort({ host, port, routes: healthPortRoutes(app) });
}
