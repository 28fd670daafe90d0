/**
 * Assembles the service from its parts (docs/architecture.md: a factory with no side effects on
 * import): store -> auth and limits -> builder and workflow engine -> services -> MCP server ->
 * gateway, one composition step per file beside this one (`app-auth.ts`, `app-engine.ts`,
 * `app-services.ts`, `app-lifecycle.ts`; the settings in `app-config.ts`).
 * Transports (`transports/`) are thin entry points around the returned `App`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeAuth } from './app-auth.js';
import type { AppConfig } from './app-config.js';
import { composeEngine, type EngineParts } from './app-engine.js';
import { appLifecycle, type AppLifecycle } from './app-lifecycle.js';
import { composeServices } from './app-services.js';
import type { LoginCodeService } from './auth/login-codes.js';
import type { OAuthGrants } from './auth/oauth-grants.js';
import type { RequestGate } from './auth/request-gate.js';
import type { TokenService } from './auth/token-service.js';
import type { WebSessionService } from './auth/web-sessions.js';
import { systemClock, type Clock } from './clock.js';
import { DEFAULTS } from './core/defaults.js';
import { loadPlans, type PlanTable } from './limits/plans.js';
import { createLogger, type Logger } from './logger.js';
import type { MetricsAccessOptions } from './metrics/metrics-access.js';
import type { MetricsEndpoint } from './metrics/metrics-endpoint.js';
import type { ServiceMetrics, ServiceMetricsDeps } from './metrics/service-metrics.js';
import { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import { createMcpServer } from './mcp/mcp-server.js';
import type { ToolDispatcher } from './mcp/tool-dispatcher.js';
import type { Role } from './roles.js';
import type { PreviewScreenshots } from './services/preview-screenshots.js';
import type { ProjectService } from './services/project-service.js';
import { OwnerEnvironment, ProjectEnvService } from './services/project-env.js';
import { ProjectAccess } from './services/project-access.js';
import { PublicUrl } from './services/public-url.js';
import { SecretBox } from './io/secret-box.js';
import type { WorkflowService } from './services/workflow-service.js';
import type { ArtifactRepo, OAuthRepo, UserRepo } from './store/repos.js';
import { openStore, type Store } from './store/store.js';
import type { HttpServerOptions, RunningHttpServer } from './transports/http-server.js';
import type { ArtifactStore } from './workflows/artifact-store.js';
import type { ProjectChanges } from './workflows/project-changes.js';
import { newRunnerIdentity } from './workflows/runner-identity.js';
import type { WorkflowEngine } from './workflows/workflow-engine.js';

/** The package version, read from package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The builders this server can run (`--builder`), re-exported for the package entry (index.ts). */
export { BUILDER_NAMES, type BuilderName } from './builders/builder-registry.js';

/** What `createApp` is configured with (`app-config.ts`). */
export type { AppConfig } from './app-config.js';

/** The assembled service: what transports, the CLI and tests use; its lifecycle is `AppLifecycle`'s (app-lifecycle.ts). */
export interface App extends AppLifecycle {
  config: AppConfig;
  /** What this process does (`config.role`, default `all`). */
  role: Role;
  logger: Logger;
  store: Store;
  tokens: TokenService;
  /** One-time login codes for the consent page and the console (docs/security.md "Sign in with OAuth"). */
  loginCodes: LoginCodeService;
  /** OAuth grants and their tokens (docs/security.md "Sign in with OAuth"). */
  oauthGrants: OAuthGrants;
  /** The OAuth tables (clients, pending authorization requests), for the HTTP transport. */
  oauthRepo: OAuthRepo;
  clock: Clock;
  gate: RequestGate;
  gateway: JsonRpcGateway;
  engine: WorkflowEngine;
  artifactStore: ArtifactStore;
  artifacts: ArtifactRepo;
  publicUrl: PublicUrl;
  projects: ProjectService;
  workflows: WorkflowService;
  users: UserRepo;
  plans: PlanTable;
  /** The tool adapter (`tools/call`), which the web console calls too. */
  tools: ToolDispatcher;
  /** Screenshots of web previews (docs/hosts.md "Screenshots"), for `svc_get_session` and the console's thumbnail. */
  screenshots: PreviewScreenshots;
  /** Web console sessions (docs/contract.md "Web console"). */
  webSessions: WebSessionService;
  /** Projects' environment variables and secrets (docs/security.md "Project environment"). */
  env: ProjectEnvService;
  /** The same, as a project's owner reaches it (the web console). */
  ownerEnv: OwnerEnvironment;
  /** Notices of project changes, pushed to the web console's live pages. */
  changes: ProjectChanges;
  /**
   * The Prometheus metrics' `/metrics` route (docs/metrics.md), when `config.metrics` is set: the
   * HTTP listener mounts it; a listener without the HTTP pipeline (a worker's health port) serves
   * it with `metrics.handle(req, res)`.
   */
  metrics?: MetricsEndpoint;
}

/**
 * Starts an HTTP listener for `app` and records its bound address as the public base URL of the
 * service (or of artifact links, for `artifactOrigin`), unless the operator configured one. The
 * HTTP side (the transport, the web console, the update routes) is loaded on this first call, so
 * that a stdio server answers `initialize` before evaluating it (docs/performance.md "Start-up time").
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function listenHttp(app: App, options: HttpServerOptions): Promise<RunningHttpServer> {
  const { listenHttpNow } = await import('./http-listener.js');
  return listenHttpNow(app, options);
}

/**
 * The MCP side that needs no store: the protocol servers and the gateway, connected, without
 * tools yet. A stdio start answers `initialize` with it before it opens the store (README
 * "Start-up time"), then passes it to `createApp` as `config.gateway`, which attaches the tools.
 */
export async function createGateway(config: Pick<AppConfig, 'logger' | 'requestDeadlineMs'>): Promise<JsonRpcGateway> {
  const gateway = newGateway(config.logger ?? createLogger(), config.requestDeadlineMs);
  await gateway.start();
  return gateway;
}

/** Projects' environment variables, their secrets sealed with the key of `--secrets-key-file` (default in the data dir). */
function projectEnvOf(config: AppConfig, store: Store, clock: Clock): ProjectEnvService {
  const box = new SecretBox(config.secretsKeyFile ?? join(config.dataDir, 'secrets.key'));
  return new ProjectEnvService({ repos: store.repos, box, clock });
}

/**
 * Builds the service, step by step (docs/architecture.md): the store, auth and limits
 * (`app-auth.ts`), the metrics, the builder and engine (`app-engine.ts`), the services and the
 * tool adapter (`app-services.ts`), the lifecycle (`app-lifecycle.ts`). Opens (and migrates) the
 * store, but runs nothing until `start()`.
 * @throws Error (rejects) for an unreadable builder config or plans file, a store that cannot be
 *   opened, or a store with blobs but no workspace snapshots.
 */
export async function createApp(config: AppConfig): Promise<App> {
  const logger = config.logger ?? createLogger();
  const clock = config.clock ?? systemClock;
  // Owner-only: the folder holds every user's projects (a folder that exists keeps its mode).
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const plans = config.plans ?? loadPlans(config.plansFile);
  const role = config.role ?? DEFAULTS.role;
  const runner = newRunnerIdentity();
  const store = await openAppStore(config, role, runner.id);
  const publicUrl = new PublicUrl(config.publicUrl, config.artifactUrl, config.artifactOrigins);
  const auth = await composeAuth({ store, config, publicUrl, plans, clock, logger });
  // Metrics load only when asked for (docs/performance.md "Start-up time"); runs are read at scrape time.
  const built: { engine?: EngineParts } = {};
  const reads = {
    localRuns: () => built.engine?.engine.busy ?? 0,
    unserved: async () => built.engine?.nodes.unserved() ?? new Map<string, number>(),
  };
  const metrics = config.metrics ? await openMetrics(store, reads, config.metrics, config.trustProxy) : undefined;
  const env = projectEnvOf(config, store, clock);
  const engineParts = composeEngine({
    store,
    config,
    role,
    runner,
    plans,
    clock,
    logger,
    environment: (projectId) => env.forBuild(projectId),
    ...(metrics && { observer: metrics.service }),
  });
  built.engine = engineParts;
  const gateway = config.gateway ?? newGateway(logger, config.requestDeadlineMs);
  const services = composeServices({
    store,
    config,
    engineParts,
    publicUrl,
    plans,
    clock,
    logger,
    gateway,
    tokens: auth.tokens,
    ...(metrics && { observer: metrics.service }),
  });
  const { tokens, loginCodes, oauthGrants, gate, webSessions } = auth;
  return {
    config,
    role,
    logger,
    store,
    tokens,
    loginCodes,
    oauthGrants,
    oauthRepo: store.repos.oauth,
    clock,
    gate,
    gateway,
    engine: engineParts.engine,
    artifactStore: engineParts.artifactStore,
    artifacts: store.repos.artifacts,
    publicUrl,
    ...services,
    users: store.repos.users,
    plans,
    webSessions,
    env,
    ownerEnv: new OwnerEnvironment(env, new ProjectAccess(store.repos.projects)),
    ...(metrics && { metrics: metrics.endpoint }),
    ...appLifecycle({
      dataDir: config.dataDir,
      role,
      store,
      engineParts,
      gateway,
      limiterPool: auth.limiterPool,
      logger,
    }),
  };
}

/**
 * The store step: opens and migrates the store (`config.databaseUrl`, else the SQLite file in the
 * data dir), its connections named after `role` and `runnerId` for `pg_stat_activity`.
 * @throws the store's error when it cannot be opened.
 */
async function openAppStore(config: AppConfig, role: Role, runnerId: string): Promise<Store> {
  return openStore({
    file: config.databaseFile ?? join(config.dataDir, 'mobile-builder.db'),
    ...(config.databaseUrl && { databaseUrl: config.databaseUrl }),
    poolSize: config.dbPoolSize ?? DEFAULTS.dbPoolSize,
    ...(config.databaseListenUrl && { listenUrl: config.databaseListenUrl }),
    applicationName: config.applicationName ?? `mobile-builder-mcp/${role}/${runnerId}`,
  });
}

/** A gateway on a new MCP protocol server of this version, without tools; messages past `deadlineMs` get -32603. */
function newGateway(logger: Logger, deadlineMs: number | undefined): JsonRpcGateway {
  return new JsonRpcGateway(createMcpServer(VERSION), undefined, logger, deadlineMs);
}

/**
 * The metrics of an app on `store` (docs/metrics.md) and their `/metrics` endpoint under `access`;
 * client addresses are read as the HTTP transport reads them (`--trust-proxy`).
 */
async function openMetrics(
  store: Store,
  reads: Pick<ServiceMetricsDeps, 'localRuns' | 'unserved'>,
  access: MetricsAccessOptions,
  trustProxy: string[] | undefined,
): Promise<{ service: ServiceMetrics; endpoint: MetricsEndpoint }> {
  const [{ ServiceMetrics }, { metricsAccess }, { metricsEndpoint }, { clientAddressReader }] = await Promise.all([
    import('./metrics/service-metrics.js'),
    import('./metrics/metrics-access.js'),
    import('./metrics/metrics-endpoint.js'),
    import('./auth/client-address.js'),
  ]);
  const service = new ServiceMetrics({ store, ...reads });
  return { service, endpoint: metricsEndpoint(service, metricsAccess(access, clientAddressReader(trustProxy))) };
}
