/**
 * Assembles the service from its parts (docs/architecture.md: a factory with no side effects on
 * import): store -> services -> workflow engine -> MCP server -> gateway.
 * Transports (`transports/`) are thin entry points around the returned `App`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoginCodeService } from './auth/login-codes.js';
import { OAuthGrants, type OAuthLifetimes } from './auth/oauth-grants.js';
import { RequestGate } from './auth/request-gate.js';
import type { CachedToken } from './auth/token-cache.js';
import { TokenService } from './auth/token-service.js';
import { WebSessionService } from './auth/web-sessions.js';
import type { Builder } from './builders/builder.js';
import { createBuilder, type BuilderName, type BuilderSettings } from './builders/builder-registry.js';
import type { BuildSandbox } from './builders/process-sandbox.js';
import { systemClock, type Clock } from './clock.js';
import { DEFAULTS } from './core/defaults.js';
import { loadPlans, type PlanTable } from './limits/plans.js';
import { MemoryRequestRateLimiter, type RequestRateLimiter } from './limits/request-rate-limiter.js';
import { StoreRequestRateLimiter } from './limits/store-rate-limiter.js';
import { createLogger, type Logger } from './logger.js';
import type { MetricsAccessOptions } from './metrics/metrics-access.js';
import type { MetricsEndpoint } from './metrics/metrics-endpoint.js';
import type { ServiceMetrics, ServiceMetricsDeps } from './metrics/service-metrics.js';
import { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import { createMcpServer } from './mcp/mcp-server.js';
import { ALL_TOOLS } from './mcp/tools/index.js';
import { ToolDispatcher } from './mcp/tool-dispatcher.js';
import { ProjectAccess } from './services/project-access.js';
import { ProjectService } from './services/project-service.js';
import { PublicUrl, type ArtifactOrigins } from './services/public-url.js';
import { WorkflowService } from './services/workflow-service.js';
import { importUpdateChannelFiles } from './services/update-channel-import.js';
import { PreviewScreenshots } from './services/preview-screenshots.js';
import { locateBrowser } from './builders/browser-location.js';
import type { ArtifactRepo, OAuthRepo, UserRepo } from './store/repos.js';
import { openStore, type Store } from './store/store.js';
import { ChangeWatch, publishCacheChange, ReadCache } from './store/read-cache.js';
import { ProjectChanges } from './workflows/project-changes.js';
import type { Role } from './roles.js';
import { newRunnerIdentity } from './workflows/runner-identity.js';
import { NO_BUILDS } from './builders/no-builds.js';
import type { HttpServerOptions, RunningHttpServer } from './transports/http-server.js';
import { ArtifactPublisher } from './workflows/artifact-publisher.js';
import type { ArtifactStore } from './workflows/artifact-store.js';
import { BlobArtifactStore } from './workflows/blob-artifact-store.js';
import { DiskArtifactStore } from './workflows/disk-artifact-store.js';
import { WorkflowEngine } from './workflows/workflow-engine.js';
import { NodeRegistry } from './workflows/node-registry.js';
import { WorkflowJournal } from './workflows/workflow-journal.js';
import { WorkspaceSync } from './workflows/workspace-sync.js';

/** The package version, read from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export { BUILDER_NAMES, type BuilderName } from './builders/builder-registry.js';

/**
 * What `createApp` needs; every field but `dataDir` has a default, the same as the command line's
 * (`core/defaults.ts`, docs/cli.md#command-line).
 */
export interface AppConfig {
  /** Holds the SQLite file, the workspaces and the artifacts (with PostgreSQL: the workspaces and caches). Created if missing. */
  dataDir: string;
  /** `:memory:` for a private in-memory store; default `<dataDir>/mobile-builder.db`. Ignored with `databaseUrl`. */
  databaseFile?: string;
  /** `postgres://…` or `postgresql://…` (`--database-url`): the store is that PostgreSQL database; absent, the SQLite file. */
  databaseUrl?: string;
  /** PostgreSQL connections in this process's pool, besides its listener (`--db-pool-size`, `DEFAULTS.dbPoolSize`). */
  dbPoolSize?: number;
  /** Session-mode URL of the PostgreSQL LISTEN connection (`--database-listen-url`); default `databaseUrl`. */
  databaseListenUrl?: string;
  /**
   * `application_name` of this process's PostgreSQL connections; default
   * `mobile-builder-mcp/<role>/<runner id>`, so that `pg_stat_activity` tells the nodes apart.
   */
  applicationName?: string;
  /**
   * What this process does (`serve --role`, docs/operators.md "Roles"; default `all`): `api` claims no
   * workflow and builds nothing (workers do), `worker` starts the engine alone (no MCP server).
   */
  role?: Role;
  /**
   * api role: how long `svc_send_message` waits for a worker to claim an idle project's new
   * workflow before it answers `queued`, in ms (`--claim-wait-ms`, `DEFAULTS.claimWaitMs`).
   */
  claimWaitMs?: number;
  /**
   * How long `svc_send_message` waits for the node holding a workflow to check an answer this node
   * cannot check itself, in ms (default 10000; docs/workflows.md "Where answers are checked").
   */
  answerCheckTimeoutMs?: number;
  /**
   * PostgreSQL store: this node's disk cache of artifacts read from the database, in MiB
   * (`--artifact-cache-mb`, `DEFAULTS.artifactCacheMb`). Read by the artifact store of the
   * PostgreSQL store; the SQLite store keeps artifacts on disk and ignores it.
   */
  artifactCacheMb?: number;
  /**
   * PostgreSQL store: the largest workspace snapshotted after a completed workflow, in MiB
   * (`--workspace-snapshot-max-mb`, `DEFAULTS.workspaceSnapshotMaxMb`). Read by the workspace
   * snapshots of the PostgreSQL store; ignored on SQLite (one machine keeps its workspaces).
   */
  workspaceSnapshotMaxMb?: number;
  /** The builder to run (default `expo`, as `serve`'s). */
  builder?: BuilderName;
  /** JSON config of the `command` builder (required with it). */
  builderConfigFile?: string;
  /** Settings of the `expo` builder (`--expo-sdk`, `--agent-command`, ...). */
  expo?: BuilderSettings['expo'];
  /** PEM private key that signs Expo Updates manifests (`--updates-signing-key`). */
  updatesSigningKeyFile?: string;
  /** Pause per step of the `scripted` builder, in ms (`--scripted-step-ms`, `DEFAULTS.scriptedStepMs`). */
  scriptedStepMs?: number;
  /** Workflows running at once in this process (`--max-concurrent-workflows`, `DEFAULTS.maxConcurrentWorkflows`). */
  maxConcurrentWorkflows?: number;
  /** Base of preview links; default from the HTTP listener's address. */
  publicUrl?: string;
  /** Base of artifact links when artifacts have their own origin (`--artifact-url`). */
  artifactUrl?: string;
  /** One origin per project for web previews and deployments (default), or the shared path form (`--artifact-origins`). */
  artifactOrigins?: ArtifactOrigins;
  /** Operator plan table (JSON); default the built-in plans. */
  plansFile?: string;
  plans?: PlanTable;
  /** Default: counted in the store (shared by every process on this data dir); in memory for `:memory:`. */
  rateLimiter?: RequestRateLimiter;
  /** Requests with a missing or refused token allowed per client address and minute over HTTP (default 120). */
  unauthenticatedPerMinute?: number;
  /**
   * Trusted proxies (`--trust-proxy`: addresses, CIDR ranges, `loopback`): a request whose peer is
   * one of them has its client address taken from `X-Forwarded-For` (docs/operators.md "Behind a TLS proxy").
   * Default none: the client address is the socket's peer.
   */
  trustProxy?: string[];
  logger?: Logger;
  clock?: Clock;
  /** How often the engine reaps expired leases and looks for work (ms, default 1000). */
  pollIntervalMs?: number;
  cancelTimeoutMs?: number;
  /** Longest time one JSON-RPC message may take before it is answered with -32603, in ms (default 30 000). */
  requestDeadlineMs?: number;
  /** Length of a workflow claim's lease, in ms (`--lease-ms`, `DEFAULTS.leaseMs`); see docs/workflows.md, "Leases". */
  leaseMs?: number;
  /** How often a running workflow's lease is renewed (ms, default min(500, leaseMs / 5)). */
  heartbeatMs?: number;
  /**
   * Whether this node's engine claims and runs workflows (default: false for the `api` role, else true). False for a node that
   * serves the tools, the console and the artifacts but builds nothing (the `api` role): its
   * engine reaps, and its sends wait for the workers (docs/workflows.md "Nodes that claim nothing").
   */
  claims?: boolean;
  /** Lifetimes of OAuth codes and tokens, in seconds (docs/security.md "Sign in with OAuth"); defaults 60 s, 1 h, 30 days. */
  oauth?: OAuthLifetimes;
  /**
   * Browser for preview screenshots (`--browser`, docs/hosts.md "Screenshots"); when absent, Debian's
   * chromium or one on PATH. A path that names no executable file means no browser (no fallback).
   */
  browser?: string;
  /**
   * A gateway made before the app, without tools (a stdio start answers `initialize` with it
   * before it opens the store, docs/performance.md "Start-up time"): the app attaches its tools to it and
   * uses it. Default: a new one.
   */
  gateway?: JsonRpcGateway;
  /** A builder object to run instead of `builder` (embedding, and tests that drive a builder by hand). */
  builderInstance?: Builder;
  /** Where builds run their processes (default: bubblewrap when it works here, else none); docs/security.md "The build sandbox". */
  buildSandbox?: BuildSandbox;
  /**
   * Count the Prometheus metrics and serve `GET /metrics` (docs/metrics.md), with this access rule
   * (`--metrics-token`, `--metrics-public`; `{}`: loopback clients only). Absent: no metrics (a
   * stdio server, the one-shot commands, embedding).
   */
  metrics?: MetricsAccessOptions;
}

/** The assembled service: what transports, the CLI and tests use. */
export interface App {
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
  /** Web console sessions (docs/console.md "Web console"). */
  webSessions: WebSessionService;
  /** Notices of project changes, pushed to the web console's live pages. */
  changes: ProjectChanges;
  /**
   * The Prometheus metrics' `/metrics` route (docs/metrics.md), when `config.metrics` is set: the
   * HTTP listener mounts it; a listener without the HTTP pipeline (a worker's health port) serves
   * it with `metrics.handle(req, res)`.
   */
  metrics?: MetricsEndpoint;
  /** Starts the workflow engine (crash recovery first) and the MCP server. */
  start(): Promise<void>;
  /**
   * A worker's graceful stop, first half (docs/workflows.md#draining): claims nothing more from
   * now on (`healthProblem` says `draining`), releases workflows waiting for input at once, and
   * lets running builds finish for up to `timeoutMs`; `close` then interrupts what still runs.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Graceful stop: engine shutdown, then the store. */
  close(): Promise<void>;
  /**
   * Why this process cannot take work now, or null when it can: `"starting"` (before `start`
   * has finished), `"draining"`, `"stopped"`, `"store_unavailable"` (the store does not answer), or
   * `"events_disconnected"` (PostgreSQL: the change-notice connection is down and reconnecting).
   */
  healthProblem(): Promise<string | null>;
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
 * tools yet. A stdio start answers `initialize` with it before it opens the store (docs/performance.md
 * "Start-up time"), then passes it to `createApp` as `config.gateway`, which attaches the tools.
 */
export async function createGateway(config: Pick<AppConfig, 'logger' | 'requestDeadlineMs'>): Promise<JsonRpcGateway> {
  const gateway = new JsonRpcGateway(createMcpServer(VERSION), undefined, config.logger ?? createLogger(), config.requestDeadlineMs);
  await gateway.start();
  return gateway;
}

/**
 * Builds the service. Opens (and migrates) the store, but runs nothing until `start()`.
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
  const store = await openStore({
    file: config.databaseFile ?? join(config.dataDir, 'mobile-builder.db'),
    ...(config.databaseUrl && { databaseUrl: config.databaseUrl }),
    poolSize: config.dbPoolSize ?? DEFAULTS.dbPoolSize,
    ...(config.databaseListenUrl && { listenUrl: config.databaseListenUrl }),
    applicationName: config.applicationName ?? `mobile-builder-mcp/${role}/${runner.id}`,
  });
  const { users, artifacts: artifactRepo, oauth: oauthRepo } = store.repos;

  const publicUrl = new PublicUrl(config.publicUrl, config.artifactUrl, config.artifactOrigins);
  // Cleared by the store's `cache:tokens` notices (a revocation or a plan change on any node) and
  // resets; exact: on SQLite another process's commit (the `token revoke` command) shows at once.
  const tokenCache = new ReadCache<CachedToken>(new ChangeWatch(store.events, (id) => id === 'tokens', true));
  const oauthGrants = new OAuthGrants(oauthRepo, clock, config.oauth, async () => {
    tokenCache.clear();
    await publishCacheChange(store, 'tokens');
  });
  // OAuth access tokens are good only at this server's `/mcp` (RFC 8707): the audience follows the public URL.
  const tokens = new TokenService(users, store.repos.tokens, clock, tokenCache, { grants: oauthGrants, audience: () => `${publicUrl.get()}/mcp` }, store);
  // A file store may be served by several processes: count in the store so that they share the limits.
  const loginCodes = new LoginCodeService(users, store.repos.loginCodes, clock);
  // PostgreSQL: exact across nodes, counted on a small pool of its own (ended after the store).
  // Loaded only then: node-postgres stays out of a SQLite start (docs/performance.md "Start-up time").
  const pgLimits = config.rateLimiter || !store.databaseUrl ? null : await import('./limits/pg-rate-limiter.js');
  const limiterPool = pgLimits && store.databaseUrl ? pgLimits.createRateLimiterPool(store.databaseUrl) : null;
  const rateLimiter =
    config.rateLimiter ?? (pgLimits && limiterPool ? new pgLimits.PgRequestRateLimiter(limiterPool) : store.rateWindows ? new StoreRequestRateLimiter(store.rateWindows) : new MemoryRequestRateLimiter());
  const gate = new RequestGate(tokens, rateLimiter, plans, {
    logger,
    ...(config.unauthenticatedPerMinute !== undefined && { unauthenticatedPerMinute: config.unauthenticatedPerMinute }),
  });
  const access = new ProjectAccess(store.repos.projects);
  const projects = new ProjectService(store, access, plans, clock);
  // The store's `project` notices (of every node), after each commit, fanned out to each project's
  // listeners; a reset (notices may have been missed, or another SQLite process committed) wakes all.
  const changes = new ProjectChanges();
  store.events.subscribe('project', (projectId) => changes.notify(projectId));
  store.events.onReset(() => changes.notifyAll());
  // Loaded only when asked for: prom-client stays out of a stdio start (docs/performance.md "Start-up time").
  // The engine's runs are read at scrape time, once the engine below exists.
  let engineRuns = () => 0;
  let unserved = async () => new Map<string, number>();
  let heldRuns = () => 0;
  const metrics = config.metrics ? await openMetrics(store, { localRuns: () => engineRuns(), unserved: () => unserved(), heldRuns: () => heldRuns() }, config.metrics, config.trustProxy) : undefined;
  const journal = new WorkflowJournal(store, clock, logger);
  // With blobs (PostgreSQL) any node serves any artifact from its cache; else they are folders here.
  const artifactStore: ArtifactStore = store.blobs
    ? new BlobArtifactStore({ dataDir: config.dataDir, blobs: store.blobs, artifacts: artifactRepo, cacheMb: config.artifactCacheMb })
    : new DiskArtifactStore(config.dataDir);
  // An api node builds nothing: it needs neither the builder's settings (a command builder's
  // config) nor its toolchain, and a build that reached it anyway would fail rather than run here.
  const builder = config.builderInstance ?? (role === 'api' ? NO_BUILDS : createBuilder(config.builder ?? DEFAULTS.builder, config));
  // The builder this deployment runs, recorded in every workflow sent through this node: an api
  // node's is its configured one, though it runs none (docs/operators.md "One builder per deployment").
  const builderName = config.builderInstance?.name ?? config.builder ?? DEFAULTS.builder;
  const claims = config.claims ?? role !== 'api';
  const nodes = new NodeRegistry(store, { runnerId: runner.id, role, builder: builderName, claims }, logger);
  // With blobs (PostgreSQL) the next workflow of a project may run on another worker: workspaces travel as snapshots.
  let workspaceSync: WorkspaceSync | undefined;
  if (store.blobs) {
    if (!store.repos.workspaces) throw new Error('A store with blobs must keep workspace snapshots (Repos.workspaces)');
    workspaceSync = new WorkspaceSync({ blobs: store.blobs, workspaces: store.repos.workspaces, journal, logger, maxMb: config.workspaceSnapshotMaxMb });
  }
  const engine = new WorkflowEngine(
    {
      store,
      journal,
      artifactStore,
      publisher: new ArtifactPublisher({ store, artifactStore, plans, clock, logger, workspacesDir: join(config.dataDir, 'workspaces') }),
      builder,
      plans,
      dataDir: config.dataDir,
      logger,
      clock,
      ...(metrics && { observer: metrics.service }),
      ...(workspaceSync && { workspaceSync }),
    },
    {
      maxConcurrent: config.maxConcurrentWorkflows ?? DEFAULTS.maxConcurrentWorkflows,
      runner,
      claims,
      claimWaitMs: config.claimWaitMs ?? DEFAULTS.claimWaitMs,
      ...(config.pollIntervalMs !== undefined && { pollIntervalMs: config.pollIntervalMs }),
      ...(config.cancelTimeoutMs !== undefined && { cancelTimeoutMs: config.cancelTimeoutMs }),
      ...(config.leaseMs !== undefined && { leaseMs: config.leaseMs }),
      ...(config.heartbeatMs !== undefined && { heartbeatMs: config.heartbeatMs }),
    },
  );
  engineRuns = () => engine.busy;
  unserved = () => nodes.unserved();
  heldRuns = () => engine.held;
  const workflows = new WorkflowService({
    store,
    access,
    journal,
    engine,
    publicUrl,
    plans,
    changes,
    workspacesDir: join(config.dataDir, 'workspaces'),
    builderName,
    nodes,
    ...(config.answerCheckTimeoutMs !== undefined && { answerCheckTimeoutMs: config.answerCheckTimeoutMs }),
  });
  const screenshots = new PreviewScreenshots({ access, artifacts: artifactRepo, artifactStore, publicUrl, browser: locateBrowser(config.browser), sandbox: config.buildSandbox, logger });
  const tools = new ToolDispatcher(ALL_TOOLS, { projects, workflows, screenshots, logger }, metrics?.service);
  const gateway = config.gateway ?? new JsonRpcGateway(createMcpServer(VERSION), undefined, logger, config.requestDeadlineMs);
  gateway.attachTools(tools);
  const webSessions = new WebSessionService(store.repos.webSessions, tokens, clock, (code) => loginCodes.redeem(code));

  let phase: 'starting' | 'ready' | 'draining' | 'stopped' = 'starting';
  return {
    config,
    role,
    logger,
    store,
    tokens,
    loginCodes,
    oauthGrants,
    oauthRepo,
    clock,
    gate,
    gateway,
    engine,
    artifactStore,
    artifacts: artifactRepo,
    publicUrl,
    projects,
    workflows,
    users,
    plans,
    tools,
    screenshots,
    webSessions,
    changes,
    ...(metrics && { metrics: metrics.endpoint }),
    async start() {
      const stale = await artifactStore.removeTemporary();
      if (stale > 0) logger.info({ folders: stale }, 'removed half-copied artifact folders left by an earlier stop');
      await importUpdateChannelFiles(config.dataDir, store.repos.updateChannels, logger);
      await workspaceSync?.removeTemporary(join(config.dataDir, 'workspaces'));
      await engine.start();
      await nodes.start();
      // A worker serves no MCP: its gateway is never started.
      if (role !== 'worker') await gateway.start();
      if (phase === 'starting') phase = 'ready';
    },
    async healthProblem() {
      if (phase !== 'ready') return phase;
      try {
        await store.ping();
      } catch {
        return 'store_unavailable';
      }
      // PostgreSQL: the LISTEN connection is down (it reconnects by itself); revocations and cancels
      // made on other nodes are missed meanwhile.
      return store.listening ? null : 'events_disconnected';
    },
    async drain(timeoutMs) {
      if (phase === 'stopped') return;
      phase = 'draining';
      // A draining worker claims nothing more: its builder's queue no longer counts on it.
      await nodes.stop();
      await engine.drain(timeoutMs);
    },
    async close() {
      if (phase === 'stopped') return;
      phase = 'stopped';
      await engine.shutdown();
      await nodes.stop();
      await gateway.close().catch(() => undefined);
      await store.close();
      await limiterPool?.end().catch(() => undefined);
    },
  };
}

/**
 * The metrics of an app on `store` (docs/metrics.md) and their `/metrics` endpoint under `access`;
 * client addresses are read as the HTTP transport reads them (`--trust-proxy`).
 */
async function openMetrics(store: Store, reads: Pick<ServiceMetricsDeps, 'localRuns' | 'unserved' | 'heldRuns'>, access: MetricsAccessOptions, trustProxy: string[] | undefined): Promise<{ service: ServiceMetrics; endpoint: MetricsEndpoint }> {
  const [{ ServiceMetrics }, { metricsAccess }, { metricsEndpoint }, { clientAddressReader }] = await Promise.all([
    import('./metrics/service-metrics.js'),
    import('./metrics/metrics-access.js'),
    import('./metrics/metrics-endpoint.js'),
    import('./auth/client-address.js'),
  ]);
  const service = new ServiceMetrics({ store, ...reads });
  return { service, endpoint: metricsEndpoint(service, metricsAccess(access, clientAddressReader(trustProxy))) };
}
