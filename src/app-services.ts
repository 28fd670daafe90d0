/**
 * Composition step of `createApp` (app.ts; docs/architecture.md): the services (projects,
 * workflows, preview screenshots), the project change notices, and the tool adapter attached to
 * the JSON-RPC gateway.
 */
import { join } from 'node:path';
import type { AppConfig } from './app-config.js';
import { locateBrowser } from './builders/browser-location.js';
import type { Clock } from './clock.js';
import type { PlanTable } from './limits/plans.js';
import type { Logger } from './logger.js';
import type { JsonRpcGateway } from './mcp/json-rpc-gateway.js';
import type { ToolCallObserver } from './mcp/tool-call-observer.js';
import { ToolDispatcher } from './mcp/tool-dispatcher.js';
import { ALL_TOOLS } from './mcp/tools/index.js';
import { PreviewScreenshots } from './services/preview-screenshots.js';
import { ProjectAccess } from './services/project-access.js';
import { ProjectService } from './services/project-service.js';
import type { PublicUrl } from './services/public-url.js';
import { WorkflowService } from './services/workflow-service.js';
import type { Store } from './store/store.js';
import type { TokenService } from './auth/token-service.js';
import { ReplyMemo } from './mcp/reply-memo.js';
import type { EngineParts } from './app-engine.js';
import { ProjectChanges } from './workflows/project-changes.js';

/** What the services step works with: the store, the engine step's parts, and the gateway the tools attach to. */
export interface ServicesStepDeps {
  store: Store;
  config: Pick<AppConfig, 'dataDir' | 'answerCheckTimeoutMs' | 'browser' | 'buildSandbox'>;
  engineParts: Pick<EngineParts, 'journal' | 'engine' | 'artifactStore' | 'nodes' | 'builderName'>;
  publicUrl: PublicUrl;
  plans: PlanTable;
  clock: Clock;
  logger: Logger;
  gateway: Pick<JsonRpcGateway, 'attachTools'>;
  /** The token service, whose generation the gateway's reply memo is valid for. */
  tokens: Pick<TokenService, 'generation'>;
  /** The metrics' observer of tool calls, when the app counts metrics. */
  observer?: ToolCallObserver;
}

/** The services step's parts. */
export interface ServiceParts {
  projects: ProjectService;
  workflows: WorkflowService;
  screenshots: PreviewScreenshots;
  tools: ToolDispatcher;
  changes: ProjectChanges;
}

/**
 * The gateway's reply memo (docs/architecture.md "The reply memo"): valid while the store's row
 * generation, the token cache's generation and the artifact base are unchanged. On a store
 * without a row generation (PostgreSQL: another node's commit is known only when its notice
 * arrives) it keeps only the answers made of one project row, valid while the store's
 * `projectRowGeneration()` (its project cache's) is unchanged; every other call reads.
 */
function replyMemo(
  store: Pick<Store, 'rowGeneration' | 'projectRowGeneration'>,
  tokens: Pick<TokenService, 'generation'>,
  publicUrl: PublicUrl,
): ReplyMemo {
  return new ReplyMemo((lastLook) => {
    const rows = store.rowGeneration(lastLook);
    const project = rows ?? store.projectRowGeneration?.() ?? null;
    return { rows, project, tokens: tokens.generation(), base: publicUrl.artifacts() };
  });
}

/**
 * Builds the services and the tool adapter, attaches the tools to `deps.gateway`, and subscribes
 * the change notices to the store's `project` events.
 */
export function composeServices(deps: ServicesStepDeps): ServiceParts {
  const { store, config, engineParts, publicUrl, plans, logger } = deps;
  const access = new ProjectAccess(store.repos.projects);
  const projects = new ProjectService(store, access, plans, deps.clock);
  // The store's `project` notices (of every node), after each commit, fanned out to each project's
  // listeners; a reset (notices may have been missed, or another SQLite process committed) wakes all.
  const changes = new ProjectChanges();
  store.events.subscribe('project', (projectId) => changes.notify(projectId));
  store.events.onReset(() => changes.notifyAll());
  const workflows = new WorkflowService({
    store,
    access,
    journal: engineParts.journal,
    engine: engineParts.engine,
    publicUrl,
    plans,
    changes,
    workspacesDir: join(config.dataDir, 'workspaces'),
    builderName: engineParts.builderName,
    nodes: engineParts.nodes,
    ...(config.answerCheckTimeoutMs !== undefined && { answerCheckTimeoutMs: config.answerCheckTimeoutMs }),
  });
  const screenshots = new PreviewScreenshots({
    access,
    artifacts: store.repos.artifacts,
    artifactStore: engineParts.artifactStore,
    publicUrl,
    browser: locateBrowser(config.browser),
    sandbox: config.buildSandbox,
    logger,
  });
  const tools = new ToolDispatcher(ALL_TOOLS, { projects, workflows, screenshots, logger }, deps.observer);
  deps.gateway.attachTools(tools, replyMemo(store, deps.tokens, publicUrl));
  return { projects, workflows, screenshots, tools, changes };
}
