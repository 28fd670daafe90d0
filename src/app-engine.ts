/**
 * Composition step of `createApp` (app.ts; docs/architecture.md): the builder and the workflow
 * engine with what it runs on (the journal, the artifact store and publisher, the node registry,
 * workspace snapshots), by role (an api node builds nothing; docs/workflows.md "Nodes that claim
 * nothing").
 */
import { join } from 'node:path';
import type { AppConfig } from './app-config.js';
import type { BuildEnvironment } from './builders/builder.js';
import { createBuilder } from './builders/builder-registry.js';
import { NO_BUILDS } from './builders/no-builds.js';
import type { Clock } from './clock.js';
import { DEFAULTS } from './core/defaults.js';
import type { PlanTable } from './limits/plans.js';
import type { Logger } from './logger.js';
import type { Role } from './roles.js';
import type { Store } from './store/store.js';
import { ArtifactPublisher } from './workflows/artifact-publisher.js';
import type { ArtifactStore } from './workflows/artifact-store.js';
import { BlobArtifactStore } from './workflows/blob-artifact-store.js';
import { DiskArtifactStore } from './workflows/disk-artifact-store.js';
import { NodeRegistry } from './workflows/node-registry.js';
import type { RunObserver } from './workflows/run-observer.js';
import type { RunnerIdentity } from './workflows/runner-identity.js';
import { WorkflowEngine } from './workflows/workflow-engine.js';
import { WorkflowJournal } from './workflows/workflow-journal.js';
import { WorkspaceSync } from './workflows/workspace-sync.js';

/** What the engine step works with: the open store, the settings, this process's role and runner. */
export interface EngineStepDeps {
  store: Store;
  config: AppConfig;
  role: Role;
  runner: RunnerIdentity;
  plans: PlanTable;
  clock: Clock;
  logger: Logger;
  /** The metrics' observer of runs, when the app counts metrics. */
  observer?: RunObserver;
  /** The environment of a project's build (`services/project-env.ts`). */
  environment?: (projectId: string) => Promise<BuildEnvironment>;
}

/** The engine step's parts. */
export interface EngineParts {
  journal: WorkflowJournal;
  artifactStore: ArtifactStore;
  nodes: NodeRegistry;
  engine: WorkflowEngine;
  /** Workspace snapshots between workers (with blobs, PostgreSQL); absent on SQLite. */
  workspaceSync?: WorkspaceSync;
  /** The builder this deployment runs, recorded in every workflow sent through this node. */
  builderName: string;
}

/**
 * Builds the engine and its parts; starts nothing (`App.start` does).
 * @throws Error for a store with blobs but no workspace snapshots, and as `createBuilder` for a
 *   builder whose settings are missing or unreadable (a command builder's config file).
 */
export function composeEngine(deps: EngineStepDeps): EngineParts {
  const { store, config, role, runner, plans, clock, logger } = deps;
  const journal = new WorkflowJournal(store, clock, logger);
  // With blobs (PostgreSQL) any node serves any artifact from its cache; else they are folders here.
  const artifactStore: ArtifactStore = store.blobs
    ? new BlobArtifactStore({
        dataDir: config.dataDir,
        blobs: store.blobs,
        artifacts: store.repos.artifacts,
        cacheMb: config.artifactCacheMb,
      })
    : new DiskArtifactStore(config.dataDir);
  // An api node builds nothing: it needs neither the builder's settings (a command builder's
  // config) nor its toolchain, and a build that reached it anyway would fail rather than run here.
  const builder =
    config.builderInstance ?? (role === 'api' ? NO_BUILDS : createBuilder(config.builder ?? DEFAULTS.builder, config));
  // The builder this deployment runs, recorded in every workflow sent through this node: an api
  // node's is its configured one, though it runs none (docs/operators.md "One builder per deployment").
  const builderName = config.builderInstance?.name ?? config.builder ?? DEFAULTS.builder;
  const claims = config.claims ?? role !== 'api';
  const nodes = new NodeRegistry(store, { runnerId: runner.id, role, builder: builderName, claims }, logger);
  const workspaceSync = workspaceSyncOf(store, journal, config, logger);
  const engine = new WorkflowEngine(
    {
      store,
      journal,
      artifactStore,
      publisher: new ArtifactPublisher({
        store,
        artifactStore,
        plans,
        clock,
        logger,
        workspacesDir: join(config.dataDir, 'workspaces'),
      }),
      builder,
      plans,
      dataDir: config.dataDir,
      logger,
      clock,
      ...(deps.observer && { observer: deps.observer }),
      ...(deps.environment && { environment: deps.environment }),
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
  return { journal, artifactStore, nodes, engine, builderName, ...(workspaceSync && { workspaceSync }) };
}

/**
 * With blobs (PostgreSQL) the next workflow of a project may run on another worker: workspaces
 * travel as snapshots. Undefined without blobs.
 * @throws Error for a store with blobs but no `repos.workspaces`.
 */
function workspaceSyncOf(
  store: Store,
  journal: WorkflowJournal,
  config: Pick<AppConfig, 'workspaceSnapshotMaxMb'>,
  logger: Logger,
): WorkspaceSync | undefined {
  if (!store.blobs) return undefined;
  if (!store.repos.workspaces) throw new Error('A store with blobs must keep workspace snapshots (Repos.workspaces)');
  return new WorkspaceSync({
    blobs: store.blobs,
    workspaces: store.repos.workspaces,
    journal,
    logger,
    maxMb: config.workspaceSnapshotMaxMb,
  });
}
