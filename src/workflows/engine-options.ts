/**
 * What a workflow engine is configured with (docs/workflows.md): its tuning, as given and with
 * every default resolved, and the services it works with.
 */
import type { Builder } from '../builders/builder.js';
import type { Clock } from '../clock.js';
import { DEFAULTS } from '../core/defaults.js';
import type { Logger } from '../logger.js';
import type { PlanTable } from '../limits/plans.js';
import type { Store } from '../store/store.js';
import type { ArtifactPublisher } from './artifact-publisher.js';
import type { ArtifactStore } from './artifact-store.js';
import type { RunnerIdentity } from './runner-identity.js';
import type { RunObserver } from './run-observer.js';
import type { BuildEnvironment } from '../builders/builder.js';
import type { WorkflowJournal } from './workflow-journal.js';
import type { WorkspaceSync } from './workspace-sync.js';

/** Engine tuning; defaults in each field's comment. */
export interface WorkflowEngineOptions {
  /** Workflows running at once in this process (waiting ones, answered or not, do not count). Default 2. */
  maxConcurrent: number;
  /** How often the reaper and the queue pump run, and other processes' answers and cancels are seen (ms). Default 1000. */
  pollIntervalMs?: number;
  /** How long a cancel waits for the builder to stop before killing its processes and recording `cancelled` (ms). Default 15000. */
  cancelTimeoutMs?: number;
  /** Length of a claim's lease (ms). Default `DEFAULTS.leaseMs`. */
  leaseMs?: number;
  /** How often a runner renews its leases (ms). Default the smaller of 500 and a fifth of the lease. */
  heartbeatMs?: number;
  /** Longest wait between SIGTERM and SIGKILL when the engine kills a build's process group (ms). Default 2000. */
  killGraceMs?: number;
  /** This process's runner identity. Default a new one (`SVC_RUNNER_HOST` or the host name). */
  runner?: RunnerIdentity;
  /**
   * Whether this engine claims and runs workflows (default true). False for a node that serves the
   * tools but builds nothing (the `api` role): it never claims or resumes a workflow and never calls
   * a builder (it may be built without one), `offer` leaves every workflow queued, and the reaper,
   * cancels and answers work as on any node (docs/workflows.md "Nodes that claim nothing").
   */
  claims?: boolean;
  /**
   * How long a send waits after its commit for another runner to claim its workflow (with
   * `claims: false`), or to resume the answered workflow that runner holds (any engine), so that
   * it can answer `running` (ms). Default `DEFAULTS.claimWaitMs`.
   */
  claimWaitMs?: number;
}

/** What the engine works with. */
export interface WorkflowEngineDeps {
  store: Store;
  journal: WorkflowJournal;
  artifactStore: ArtifactStore;
  publisher: ArtifactPublisher;
  /** What runs the workflows this engine claims. Required unless `claims` is false (then it is never called). */
  builder?: Builder | undefined;
  /** The plans, for each user's bound on running workflows. */
  plans: PlanTable;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  /** Told of each run's end and of the reaper's takeovers (the metrics); none by default. */
  observer?: RunObserver;
  /**
   * The environment of a project's build (docs/security.md "Project environment"); none when absent.
   * @throws when a secret cannot be opened (the run fails with `environment_unreadable`)
   */
  environment?: (projectId: string) => Promise<BuildEnvironment>;
  /** Workspace snapshots, with a store that has blobs (docs/postgresql.md#workspace-snapshots); absent: the workspace stays on this disk. */
  workspaceSync?: WorkspaceSync;
}

/** `WorkflowEngineOptions` with every default applied and every bound enforced (all times in ms). */
export interface EngineSettings {
  /** Workflows running at once in this process, at least 1. */
  readonly maxConcurrent: number;
  /** The tick: reaper, pump, and the re-read of runs this engine holds. */
  readonly pollIntervalMs: number;
  /** How long a cancel or a shutdown waits for a builder to stop. */
  readonly cancelTimeoutMs: number;
  /** Length of a lease, at least 100. */
  readonly leaseMs: number;
  /** Interval of the lease renewals, at least 10. */
  readonly heartbeatMs: number;
  /** Grace between SIGTERM and SIGKILL of a build's process group, 0 to 10 000. */
  readonly killGraceMs: number;
  /** Whether this engine claims and runs workflows. */
  readonly claims: boolean;
  /** How long a send waits for another runner to claim or resume its workflow, at least 0. */
  readonly claimWaitMs: number;
}

/** Applies the defaults and bounds documented on `WorkflowEngineOptions`. */
export function resolveSettings(options: WorkflowEngineOptions): EngineSettings {
  const leaseMs = Math.max(100, options.leaseMs ?? DEFAULTS.leaseMs);
  return {
    maxConcurrent: Math.max(1, options.maxConcurrent),
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    cancelTimeoutMs: options.cancelTimeoutMs ?? 15_000,
    leaseMs,
    heartbeatMs: Math.max(10, options.heartbeatMs ?? Math.min(500, Math.floor(leaseMs / 5))),
    killGraceMs: Math.min(Math.max(0, options.killGraceMs ?? 2000), 10_000),
    claims: options.claims ?? true,
    claimWaitMs: Math.max(0, options.claimWaitMs ?? DEFAULTS.claimWaitMs),
  };
}
