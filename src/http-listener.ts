/**
 * The HTTP side of the service (docs/architecture.md): the narrow view of an `App` the HTTP
 * transport and the web console work with, and the listener. `app.ts` loads this module on the
 * first `listenHttp`, so a stdio start does not evaluate the transport, the console, the update
 * routes and their packages before it answers `initialize` (docs/performance.md "Start-up time").
 */
import { clientAddressReader, trustedPeerReader } from './auth/client-address.js';
import type { LoginCodeService } from './auth/login-codes.js';
import type { OAuthGrants } from './auth/oauth-grants.js';
import type { RequestGate } from './auth/request-gate.js';
import type { TokenService } from './auth/token-service.js';
import type { WebSessionService } from './auth/web-sessions.js';
import { builderRoutes, type BuilderSettings } from './builders/builder-registry.js';
import type { Clock } from './clock.js';
import { createWebConsole } from './console/web-console.js';
import type { Logger } from './logger.js';
import type { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import type { MetricsEndpoint } from './metrics/metrics-endpoint.js';
import type { ToolDispatcher } from './mcp/tool-dispatcher.js';
import { ArtifactReader } from './services/artifact-reader.js';
import type { PublicUrl } from './services/public-url.js';
import type { WorkflowService } from './services/workflow-service.js';
import type { ArtifactRepo, OAuthRepo } from './store/repos.js';
import type { Store } from './store/store.js';
import {
  startHttpServer,
  type HttpServerDeps,
  type HttpServerOptions,
  type RunningHttpServer,
} from './transports/http-server.js';
import type { ArtifactStore } from './workflows/artifact-store.js';
import type { ProjectChanges } from './workflows/project-changes.js';
import type { Role } from './roles.js';
import type { OwnerEnvironment } from './services/project-env.js';

/** The parts of the service (an `App`, app.ts) the HTTP side works with. */
export interface HttpApp {
  config: BuilderSettings & { trustProxy?: string[] | undefined };
  logger: Logger;
  store: Store;
  tokens: TokenService;
  loginCodes: LoginCodeService;
  oauthGrants: OAuthGrants;
  oauthRepo: OAuthRepo;
  clock: Clock;
  gate: RequestGate;
  gateway: JsonRpcGateway;
  artifactStore: ArtifactStore;
  artifacts: ArtifactRepo;
  publicUrl: PublicUrl;
  workflows: WorkflowService;
  tools: ToolDispatcher;
  webSessions: WebSessionService;
  changes: ProjectChanges;
  /** Projects' environment as their owners reach it (the console's Environment section). */
  ownerEnv: OwnerEnvironment;
  /** The `/metrics` route, when the app counts metrics. */
  metrics?: MetricsEndpoint;
  healthProblem(): Promise<string | null>;
  role: Role;
}

/**
 * The narrow view of the service the HTTP transport works with (docs/architecture.md).
 */
export function httpDepsOf(app: HttpApp): HttpServerDeps {
  const artifacts = new ArtifactReader(
    app.artifacts,
    app.artifactStore,
    app.store.repos.updateChannels,
    app.store.repos.releases,
  );
  const clientAddress = clientAddressReader(app.config.trustProxy);
  const web = createWebConsole({
    tools: app.tools,
    sessions: app.webSessions,
    gate: app.gate,
    changes: app.changes,
    projectStates: (caller) => app.workflows.ownProjectStates(caller),
    latestPageStart: (caller, projectId, limit) => app.workflows.latestPageStart(caller, projectId, limit),
    environment: app.ownerEnv,
    onReset: (listener) => app.store.events.onReset(listener),
    publicUrl: app.publicUrl,
    logger: app.logger,
    clientAddress,
  });
  return {
    gateway: app.gateway,
    gate: app.gate,
    oneLook: (fn, shared) => app.store.oneLook(fn, shared),
    clientAddress,
    trustedPeer: trustedPeerReader(app.config.trustProxy),
    healthProblem: () => app.healthProblem(),
    role: app.role,
    artifacts,
    builderRoutes: builderRoutes({ artifacts, artifactBaseUrl: () => app.publicUrl.artifacts() }, app.config),
    publicUrl: app.publicUrl,
    logger: app.logger,
    // The consent page treats a browser signed in to the console as signed in.
    oauth: {
      repo: app.oauthRepo,
      grants: app.oauthGrants,
      loginCodes: app.loginCodes,
      tokens: app.tokens,
      clock: app.clock,
      sessionUser: (req) => web.sessionUser(req),
      countSignInAttempt: (address) => app.gate.countSignInAttempt(address),
      clientAddress,
      trustProxy: app.config.trustProxy,
    },
    console: web,
    ...(app.metrics && { metrics: app.metrics }),
  };
}

/**
 * `listenHttp` (app.ts) once this module is loaded: starts an HTTP listener for `app` and records
 * its bound address as the public base URL of the service (or of artifact links, for
 * `artifactOrigin`), unless the operator configured one.
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function listenHttpNow(app: HttpApp, options: HttpServerOptions): Promise<RunningHttpServer> {
  const http = await startHttpServer(httpDepsOf(app), options);
  if (options.artifactOrigin) app.publicUrl.artifactsBound(options.host, http.port);
  else app.publicUrl.bound(options.host, http.port);
  return http;
}
