/**
 * Running one claimed workflow (docs/workflows.md "The claim" and "Leases"): after its claim
 * commits, the builder runs on the project's workspace with a build context that writes under this
 * runner's lease; when it returns or throws, the run's process groups are killed and its end is
 * recorded (`run-endings.ts`).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildFailure, EXPORT_ARCHIVE, type BuildEnvironment, type BuildJob } from '../builders/builder.js';
import { secretRedactor } from '../builders/output-redaction.js';
import { resolveCheckpoint, restoredWorkflowOf } from './checkpoints.js';
import { redactPaths } from '../io/path-redaction.js';
import type { WorkflowRow } from '../store/rows.js';
import { EngineBuildContext } from './build-context.js';
import type { EngineState } from './engine-state.js';
import type { GroupSweeps } from './group-sweeps.js';
import type { LeaseHeartbeat } from './lease-heartbeat.js';
import { LeaseLostError, type LocalRun } from './local-run.js';
import { recordEnd, type RunFailure } from './run-endings.js';
import { runOutcome } from './run-observer.js';
import { runRollback } from './rollback-run.js';
import { isStoreFailure, STORE_FAILURE_MESSAGE } from './store-failure.js';

/** Starts the builders of claimed runs and sees each one to its recorded end. */
export class BuilderRuns {
  constructor(
    private readonly state: EngineState,
    private readonly leases: LeaseHeartbeat,
    private readonly groups: GroupSweeps,
    /** Called after each run has ended and left the engine's runs (its slot is free). */
    private readonly onEnded: () => void,
  ) {}

  /** Starts the builder of a claimed run, after its claim committed; never throws (a failure is logged). */
  begin(row: WorkflowRow, run: LocalRun): void {
    run.launched = true;
    run.done = this.execute(row, run)
      .catch((error) =>
        this.state.deps.logger.error({ err: error, workflowId: row.id }, 'workflow run failed unexpectedly'),
      )
      .finally(() => {
        this.state.release(row.id);
        this.onEnded();
      });
  }

  private async execute(row: WorkflowRow, run: LocalRun): Promise<void> {
    const { logger, store, dataDir } = this.state.deps;
    const builder = this.state.builder;
    const project = await store.repos.projects.findById(row.projectId);
    if (!project) return;
    const workspaceDir = join(dataDir, 'workspaces', row.projectId);
    await mkdir(workspaceDir, { recursive: true });
    const release = await store.repos.releases.byWorkflow(row.id);
    const environment = await this.environmentOf(row);
    const restoring = row.kind === 'restore' ? await this.restoreOf(row) : {};
    const job: BuildJob = {
      workflowId: row.id,
      // A restore is a build whose files come from a checkpoint (docs/builders.md "Checkpoints");
      // a rollback publishes again (docs/releases.md).
      kind: row.kind === 'build' || row.kind === 'restore' ? 'build' : 'deploy',
      ...(release && { channel: release.channel }),
      instruction: row.instruction,
      project: { id: project.id, name: project.name, description: project.description, ownerId: project.ownerId },
      history: await store.repos.workflows.instructionsBefore(row.projectId, row.seq),
      workspaceDir,
      signal: run.controller.signal,
      ...(environment.env && { env: environment.env }),
      ...(restoring.restore && { restore: restoring.restore }),
    };
    // A project's secrets never leave the build's processes: out of every report, never published.
    const redactSecrets = secretRedactor(environment.env?.secrets ?? {});
    const context = new EngineBuildContext(row, run, {
      ...this.state.deps,
      runner: this.state.runner,
      workspaceDir,
      secrets: environment.env?.secrets ?? {},
      onLeaseLost: (r) => this.leases.leaseLost(r),
    });
    logger.info({ workflowId: row.id, kind: row.kind }, 'workflow started');

    let failure: RunFailure | null = null;
    const startedAt = performance.now();
    try {
      if (environment.failure) throw environment.failure;
      if (restoring.failure) throw restoring.failure;
      await this.state.deps.workspaceSync?.restore(row.projectId, workspaceDir, (text) => context.say(text));
      // A rollback publishes earlier deployments again: no builder (docs/releases.md "Rollback").
      if (row.kind === 'rollback') await runRollback(store.repos, row, context);
      else await builder.run(job, context);
      await context.announceRelease();
    } catch (error) {
      failure = this.failureOf(error, row, workspaceDir);
      failure = { code: failure.code, message: redactSecrets(failure.message) };
      if (error instanceof LeaseLostError) this.leases.leaseLost(run);
    }
    // Its own end is recorded below: a re-read of its row meanwhile must not take it for lost.
    run.finishing = true;
    // No process of this workflow outlives it.
    await this.groups.killRun(run);
    await recordEnd(this.state, run, failure);
    this.state.deps.observer?.runEnded({
      builder: builder.name,
      kind: row.kind,
      outcome: runOutcome(run, failure !== null),
      seconds: (performance.now() - startedAt) / 1000,
    });
  }

  /**
   * The project's environment for this run, or the failure that ends the run before its builder
   * starts (a secret that does not open with this node's key). Never throws.
   */
  private async environmentOf(row: WorkflowRow): Promise<{ env?: BuildEnvironment; failure?: BuildFailure }> {
    const read = this.state.deps.environment;
    if (!read) return {};
    try {
      return { env: await read(row.projectId) };
    } catch (error) {
      this.state.deps.logger.error({ err: error, workflowId: row.id }, "could not read the project's environment");
      const reason = error instanceof Error && error.name === 'SecretKeyError' ? error.message : 'the store failed';
      return {
        failure: new BuildFailure('environment_unreadable', `The project's environment could not be read: ${reason}`),
      };
    }
  }

  /**
   * What a restore hands its builder: the checkpoint its instruction names, with the local path of
   * the checkpoint's zip; or the failure that ends the run before its builder starts (a builder that
   * keeps no checkpoints, a checkpoint gone since the send). Never throws.
   */
  private async restoreOf(
    row: WorkflowRow,
  ): Promise<{ restore?: NonNullable<BuildJob['restore']>; failure?: BuildFailure }> {
    const { store, artifactStore, logger } = this.state.deps;
    if (!this.state.builder.restores)
      return {
        failure: new BuildFailure(
          'restore_unsupported',
          `The ${this.state.builder.name} builder keeps no checkpoints of the app's files: nothing to restore.`,
        ),
      };
    try {
      const name = restoredWorkflowOf(row.instruction) ?? row.instruction;
      const checkpoint = await resolveCheckpoint(store.repos.artifacts, row.projectId, name);
      const dir = await artifactStore.localDir(checkpoint.artifact.id);
      return {
        restore: {
          workflowId: checkpoint.workflowId,
          deployNumber: checkpoint.deployNumber,
          archive: join(dir, EXPORT_ARCHIVE),
        },
      };
    } catch (error) {
      logger.warn({ err: error, workflowId: row.id }, 'could not read the checkpoint of a restore');
      return {
        failure: new BuildFailure(
          'checkpoint_missing',
          'The checkpoint to restore could not be read: nothing changed.',
        ),
      };
    }
  }

  /** What a builder's throw is stored as: a `BuildFailure`'s code, else `builder_error`; never a server path or SQL. */
  private failureOf(error: unknown, row: WorkflowRow, workspaceDir: string): RunFailure {
    const { logger, store, dataDir } = this.state.deps;
    // On PostgreSQL a failed statement's message holds SQL and the database's address: not for the conversation.
    const lostStore = !(error instanceof BuildFailure) && store.dialect === 'postgres' && isStoreFailure(error);
    if (lostStore) logger.error({ err: error, workflowId: row.id }, 'a build failed on a database statement');
    const raw =
      error instanceof BuildFailure
        ? { code: error.code, message: error.message }
        : {
            code: 'builder_error',
            message: lostStore ? STORE_FAILURE_MESSAGE : error instanceof Error ? error.message : String(error),
          };
    // Stored in the conversation, which other users may read on a public project: no server paths.
    return { code: raw.code, message: redactPaths(raw.message, { dataDir, workspaceDir }) };
  }
}
