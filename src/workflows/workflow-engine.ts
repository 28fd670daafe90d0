/**
 * The in-process workflow runner (design section 4; issue 3 item 2): a global concurrency limit,
 * per-project FIFO, the state machine
 *
 *   queued -> running -> completed | failed
 *   running <-> waiting_for_input
 *   queued -> cancelled
 *   running | waiting_for_input -> cancelling -> cancelled
 *
 * crash recovery at start, and graceful shutdown. The database is the source of truth: every
 * start is a compare-and-set of `queued -> running`, and the partial unique index keeps one active
 * workflow per project even when several processes share the store. A poll loop picks up work and
 * cancellations coming from other processes.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Builder, BuildJob } from '../builders/builder.js';
import { BuildFailure } from '../builders/builder.js';
import { redactPaths } from '../io/path-redaction.js';
import type { Logger } from '../logger.js';
import type { ArtifactRepo } from '../store/artifact-repo.js';
import type { Store } from '../store/database.js';
import type { ProjectRepo } from '../store/project-repo.js';
import type { QuestionRepo } from '../store/question-repo.js';
import type { WorkflowRow } from '../store/schema.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';
import type { ArtifactPublisher } from './artifact-publisher.js';
import type { ArtifactStore } from './artifact-store.js';
import { EngineBuildContext } from './build-context.js';
import { isRunnerAlive, newRunnerId } from './runner-identity.js';
import { kindLabel, type WorkflowJournal } from './workflow-journal.js';

/** Why a run's signal aborted. */
export type AbortCause = 'cancel' | 'shutdown';

/** A workflow this process is running. */
export interface LocalRun {
  workflowId: string;
  projectId: string;
  controller: AbortController;
  /** Set while the builder waits for an answer. */
  waiting: { questionId: string; resolve: (answer: string) => void; reject: (reason: unknown) => void } | null;
  done: Promise<void>;
}

/** Engine tuning; defaults in each field's comment. */
export interface WorkflowEngineOptions {
  /** Workflows running at once in this process (waiting ones do not count). Default 2. */
  maxConcurrent: number;
  /** How often to look for work, answers and cancellations from other processes (ms). Default 1000. */
  pollIntervalMs?: number;
  /** How long a cancel waits for the builder to stop before recording `cancelled` anyway (ms). Default 15000. */
  cancelTimeoutMs?: number;
}

/** What the engine works with. */
export interface WorkflowEngineDeps {
  store: Store;
  workflows: WorkflowRepo;
  questions: QuestionRepo;
  artifacts: ArtifactRepo;
  projects: ProjectRepo;
  journal: WorkflowJournal;
  artifactStore: ArtifactStore;
  publisher: ArtifactPublisher;
  builder: Builder;
  dataDir: string;
  logger: Logger;
}

const INTERRUPTED_AT_START = 'The server stopped while this workflow was running. Send the instruction again to retry.';
const INTERRUPTED_AT_SHUTDOWN = 'The server shut down while this workflow was running. Send the instruction again to retry.';

/** Runs workflows: starts, resumes, cancels and recovers them (design section 4). */
export class WorkflowEngine {
  readonly runnerId = newRunnerId();
  private readonly runs = new Map<string, LocalRun>();
  private reserved = 0;
  private accepting = false;
  private timer: NodeJS.Timeout | undefined;
  private pumpQueued = false;
  private readonly maxConcurrent: number;
  private readonly pollIntervalMs: number;
  private readonly cancelTimeoutMs: number;

  constructor(
    private readonly deps: WorkflowEngineDeps,
    options: WorkflowEngineOptions,
  ) {
    this.maxConcurrent = Math.max(1, options.maxConcurrent);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.cancelTimeoutMs = options.cancelTimeoutMs ?? 15_000;
  }

  /** Recovers what an earlier process left, then starts taking work. */
  start(): void {
    this.recoverOrphans(INTERRUPTED_AT_START);
    this.accepting = true;
    this.timer = setInterval(() => this.tick(), this.pollIntervalMs);
    this.timer.unref();
    this.schedulePump();
  }

  /** Number of workflows this process runs now (not counting ones waiting for an answer). */
  get busy(): number {
    let n = 0;
    for (const run of this.runs.values()) if (!run.waiting) n++;
    return n;
  }

  /** True while `workflowId` runs in this process. */
  isLocal(workflowId: string): boolean {
    return this.runs.has(workflowId);
  }

  /**
   * Reserves a slot for a workflow that is about to be stored as `running` (synchronous, so that
   * the caller's transaction and this check cannot interleave with another start).
   * @returns false when the engine is full or not accepting work.
   */
  tryReserve(): boolean {
    if (!this.accepting || this.busy + this.reserved >= this.maxConcurrent) return false;
    this.reserved++;
    return true;
  }

  /** Gives back a reservation that was not used. */
  release(): void {
    if (this.reserved > 0) this.reserved--;
  }

  /** Starts the builder of a workflow stored as `running` by this process under a reservation. */
  launchReserved(row: WorkflowRow): void {
    this.release();
    this.startRun(row);
  }

  /** Asks the engine to look for queued work soon (coalesced). */
  schedulePump(): void {
    if (this.pumpQueued || !this.accepting) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /**
   * Hands a stored answer to the builder waiting for it. When no builder of this process waits
   * (the workflow outlived an earlier process), claims the workflow and runs its builder again;
   * the builder's `ask` then finds the stored answer at once.
   */
  deliverAnswer(workflowId: string, questionId: string, answer: string): void {
    const run = this.runs.get(workflowId);
    if (run) {
      if (run.waiting?.questionId === questionId) run.waiting.resolve(answer);
      return;
    }
    const row = this.deps.workflows.findById(workflowId);
    if (!row || row.status !== 'running' || !this.accepting) return;
    if (row.runnerId && row.runnerId !== this.runnerId && isRunnerAlive(row.runnerId, this.runnerId)) return;
    this.deps.workflows.update(workflowId, { runnerId: this.runnerId });
    this.startRun({ ...row, runnerId: this.runnerId });
  }

  /**
   * Stops the builder of a workflow already stored as `cancelling`, and records `cancelled` once it
   * has stopped (or after the cancel timeout, or at once when no live process runs it).
   * @returns when the workflow is terminal, or when the other process running it did not finish in time.
   */
  async cancel(workflowId: string): Promise<void> {
    const run = this.runs.get(workflowId);
    if (run) {
      this.abortRun(run, 'cancel');
      await Promise.race([run.done, delay(this.cancelTimeoutMs)]);
      this.recordCancelled(workflowId);
      return;
    }
    const deadline = Date.now() + this.cancelTimeoutMs;
    for (;;) {
      const row = this.deps.workflows.findById(workflowId);
      if (!row || row.status !== 'cancelling') return;
      // Nobody is running it (its process is gone, or it was this process's and has ended).
      if (row.runnerId === this.runnerId || !isRunnerAlive(row.runnerId, this.runnerId)) {
        this.recordCancelled(workflowId);
        return;
      }
      if (Date.now() > deadline) return;
      await delay(Math.min(200, this.pollIntervalMs));
    }
  }

  /**
   * Graceful shutdown (SIGTERM/SIGINT): stops taking work, stops every builder, and records what
   * was interrupted (`running` -> `failed` with `error.code = "interrupted"`; a workflow waiting
   * for input keeps waiting, its question stored).
   */
  async shutdown(): Promise<void> {
    this.accepting = false;
    if (this.timer) clearInterval(this.timer);
    const runs = [...this.runs.values()];
    for (const run of runs) this.abortRun(run, 'shutdown');
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), delay(this.cancelTimeoutMs)]);
  }

  // --- internals -------------------------------------------------------------------------

  private recordCancelled(workflowId: string): void {
    const row = this.deps.workflows.findById(workflowId);
    if (!row) return;
    this.deps.journal.transition(row, 'cancelling', 'stopped', { runnerId: null }, {
      role: 'system',
      type: 'status',
      content: `${kindLabel(row.kind)} cancelled.`,
    });
  }

  private abortRun(run: LocalRun, cause: AbortCause): void {
    if (run.controller.signal.aborted) return;
    run.controller.abort(cause);
    run.waiting?.reject(cause);
  }

  /**
   * Active workflows whose process is gone: `running` -> `failed` (interrupted), `cancelling` ->
   * `cancelled`; `waiting_for_input` keeps its state and question.
   */
  private recoverOrphans(message: string): void {
    for (const row of this.deps.workflows.listActive()) {
      // A workflow waiting for an answer keeps waiting whoever ran it; its question is stored.
      if (row.status === 'waiting_for_input' || this.runs.has(row.id)) continue;
      if (row.runnerId !== this.runnerId && isRunnerAlive(row.runnerId, this.runnerId)) continue;
      if (row.status === 'running') {
        this.deps.journal.transition(
          row,
          'running',
          'interrupt',
          { errorCode: 'interrupted', errorMessage: message, runnerId: null },
          { role: 'system', type: 'error', content: `${kindLabel(row.kind)} interrupted: ${message}` },
        );
        this.deps.logger.warn({ workflowId: row.id }, 'workflow interrupted by an earlier stop');
      } else if (row.status === 'cancelling') {
        this.recordCancelled(row.id);
      }
    }
  }

  private tick(): void {
    try {
      if (this.runs.size > 0) {
        const statuses = this.deps.workflows.statuses([...this.runs.keys()]);
        for (const run of this.runs.values()) {
          const status = statuses.get(run.workflowId);
          if (status === 'cancelling' || status === undefined) this.abortRun(run, 'cancel');
          else if (run.waiting && status === 'running') {
            const question = this.deps.questions.findById(run.waiting.questionId);
            if (question?.answer != null) run.waiting.resolve(question.answer);
          }
        }
      }
      this.recoverOrphans(INTERRUPTED_AT_START);
      this.pump();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'workflow engine tick failed');
    }
  }

  /** Starts queued workflows while slots are free (per-project FIFO, oldest first). */
  private pump(): void {
    if (!this.accepting) return;
    let free = this.maxConcurrent - this.busy - this.reserved;
    if (free <= 0) return;
    for (const row of this.deps.workflows.startable(free)) {
      let started = false;
      try {
        started = this.deps.journal.transition(row, 'queued', 'claim', {
          runnerId: this.runnerId,
          startedAt: this.deps.journal.now(),
        });
      } catch (error) {
        // Another process started a workflow of this project first (partial unique index).
        if (!String((error as Error).message).includes('UNIQUE')) throw error;
      }
      if (!started) continue;
      this.startRun({ ...row, status: 'running', runnerId: this.runnerId });
      if (--free <= 0) break;
    }
  }

  private startRun(row: WorkflowRow): void {
    const run: LocalRun = {
      workflowId: row.id,
      projectId: row.projectId,
      controller: new AbortController(),
      waiting: null,
      done: Promise.resolve(),
    };
    this.runs.set(row.id, run);
    run.done = this.execute(row, run)
      .catch((error) => this.deps.logger.error({ err: error, workflowId: row.id }, 'workflow run failed unexpectedly'))
      .finally(() => {
        this.runs.delete(row.id);
        this.schedulePump();
      });
  }

  private async execute(row: WorkflowRow, run: LocalRun): Promise<void> {
    const { journal, builder, logger } = this.deps;
    const project = this.deps.projects.findById(row.projectId);
    if (!project) return;
    const workspaceDir = join(this.deps.dataDir, 'workspaces', row.projectId);
    await mkdir(workspaceDir, { recursive: true });
    const job: BuildJob = {
      workflowId: row.id,
      kind: row.kind,
      instruction: row.instruction,
      project: { id: project.id, name: project.name, description: project.description },
      history: this.deps.workflows.instructionsBefore(row.projectId, row.seq),
      workspaceDir,
      signal: run.controller.signal,
    };
    const context = new EngineBuildContext(row, run, this.deps);
    journal.post(row.projectId, row.id, { role: 'system', type: 'status', content: `${kindLabel(row.kind)} started (builder: ${builder.name}).` });
    logger.info({ workflowId: row.id, kind: row.kind }, 'workflow started');

    let failure: { code: string; message: string } | null = null;
    try {
      await builder.run(job, context);
    } catch (error) {
      const raw =
        error instanceof BuildFailure
          ? { code: error.code, message: error.message }
          : { code: 'builder_error', message: error instanceof Error ? error.message : String(error) };
      // Stored in the conversation, which other users may read on a public project: no server paths.
      failure = { code: raw.code, message: redactPaths(raw.message, { dataDir: this.deps.dataDir, workspaceDir }) };
    }

    const cause = run.controller.signal.aborted ? (run.controller.signal.reason as AbortCause) : null;
    if (cause === 'shutdown') {
      journal.transition(
        row,
        'running',
        'interrupt',
        { errorCode: 'interrupted', errorMessage: INTERRUPTED_AT_SHUTDOWN, runnerId: null },
        { role: 'system', type: 'error', content: `${kindLabel(row.kind)} interrupted: ${INTERRUPTED_AT_SHUTDOWN}` },
      );
      this.recordCancelled(row.id);
      return;
    }
    // A cancel that raced with the builder's end wins: the user asked for it.
    if (cause === 'cancel' || this.deps.workflows.findById(row.id)?.status === 'cancelling') {
      this.recordCancelled(row.id);
      return;
    }
    if (failure) {
      journal.transition(
        row,
        'running',
        'fail',
        { errorCode: failure.code, errorMessage: failure.message, runnerId: null },
        { role: 'system', type: 'error', content: `${kindLabel(row.kind)} failed: ${failure.message}` },
      );
      logger.info({ workflowId: row.id, code: failure.code }, 'workflow failed');
    } else {
      journal.transition(row, 'running', 'complete', { runnerId: null }, {
        role: 'system',
        type: 'status',
        content: `${kindLabel(row.kind)} completed.`,
      });
      logger.info({ workflowId: row.id }, 'workflow completed');
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
