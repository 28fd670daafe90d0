/**
 * The workflow engine (docs/workflows.md): it owns the only claim path, runs builders under
 * leases, and reaps what other runners left. The database is the source of truth. This file
 * composes the engine's parts, one job each (docs/architecture.md "The workflow engine"):
 *
 * - `slot-claims.ts`: every start is a compare-and-set `queued -> running` or
 *   `waiting_for_input -> running` in a store transaction, the pump's own or the sending tool's
 *   (`offer`); the next to start is chosen round-robin across users within their plans' running
 *   bounds (`claims.ts`, `fair-shares.ts`); `engine-starts.ts` starts the builders after the commit.
 * - `builder-runs.ts` runs a claimed workflow's builder; `run-endings.ts` records how it ended.
 * - `lease-heartbeat.ts` renews the leases of the runs this engine holds; a runner that lost one
 *   aborts its builder, kills its process groups and writes nothing more.
 * - `reaper.ts` takes over expired leases (the tick; start-up recovery is the same code).
 * - `group-sweeps.ts` kills the process groups a build left on this host.
 * - `coordinator.ts` wakes the engine: the store's change notices, the tick, the pump.
 * - `cancels.ts` stops a cancelled workflow's builder and records `cancelled`.
 * - `engine-state.ts` holds what they share: settings, runs, slots, the database's clock.
 *
 * An engine with `claims: false` (the `api` role) never claims or runs anything: it reaps, stores
 * cancels and answers, and waits for the workers that do (docs/workflows.md "Nodes that claim
 * nothing").
 */
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import type { WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';
import { AnswerCheckRunner } from './answer-check-runner.js';
import { BuilderRuns } from './builder-runs.js';
import { cancelWorkflow } from './cancels.js';
import { Coordinator } from './coordinator.js';
import {
  resolveSettings,
  type EngineSettings,
  type WorkflowEngineDeps,
  type WorkflowEngineOptions,
} from './engine-options.js';
import { EngineStarts } from './engine-starts.js';
import { EngineState } from './engine-state.js';
import { GroupSweeps } from './group-sweeps.js';
import { LeaseHeartbeat } from './lease-heartbeat.js';
import { Reaper } from './reaper.js';
import { recordEnd } from './run-endings.js';
import { newRunnerIdentity, type RunnerIdentity } from './runner-identity.js';
import { SlotClaims } from './slot-claims.js';
import { waitForWorkflow } from './workflow-wait.js';

/** Runs workflows: claims, runs under leases, resumes, cancels and reaps them (docs/workflows.md). */
export class WorkflowEngine {
  readonly runner: RunnerIdentity;
  /** Whether this engine claims and runs workflows (see `WorkflowEngineOptions.claims`). */
  readonly claims: boolean;
  private readonly settings: EngineSettings;
  private readonly state: EngineState;
  private readonly groups: GroupSweeps;
  private readonly leases: LeaseHeartbeat;
  private readonly reaper: Reaper;
  private readonly slotClaims: SlotClaims;
  private readonly coordinator: Coordinator;
  private readonly builderRuns: BuilderRuns;

  /**
   * @throws Error when `options.claims` is not false and `deps.builder` is missing.
   */
  constructor(deps: WorkflowEngineDeps, options: WorkflowEngineOptions) {
    this.settings = resolveSettings(options);
    this.runner = options.runner ?? newRunnerIdentity();
    this.claims = this.settings.claims;
    if (this.claims && !deps.builder) throw new Error('A workflow engine that claims workflows needs a builder');
    const state = (this.state = new EngineState(deps, this.settings, this.runner));
    const pump = () => this.coordinator.schedulePump();
    this.groups = new GroupSweeps(state);
    this.leases = new LeaseHeartbeat(state, this.groups);
    this.reaper = new Reaper(state, this.groups, pump);
    this.slotClaims = new SlotClaims(state, this.groups, () => this.coordinator.pumpSoon());
    this.builderRuns = new BuilderRuns(state, this.leases, this.groups, pump);
    this.coordinator = new Coordinator(state, {
      claims: this.slotClaims,
      reaper: this.reaper,
      leases: this.leases,
      newStarts: () => this.newStarts(),
      answerChecks: new AnswerCheckRunner({
        store: deps.store,
        workspacesDir: join(deps.dataDir, 'workspaces'),
        logger: deps.logger,
        runnerId: this.runner.id,
        holds: (id) => state.runs.get(id)?.waiting != null,
        takesWork: () => this.claims && state.accepting,
        workspaceSync: deps.workspaceSync,
      }),
    });
  }

  /** The runner id stored in the workflows this engine claims. */
  get runnerId(): string {
    return this.runner.id;
  }

  /** Number of workflows this process runs now (not counting ones waiting for an answer). */
  get busy(): number {
    return this.state.busy;
  }

  /**
   * Recovers what earlier runners left (the reaper's code path), then starts taking work (with
   * `claims: false`: starts the reaper's tick only) and listening to the store's change notices.
   * @throws the store's error when the first reap cannot read or write it.
   */
  async start(): Promise<void> {
    await this.reaper.reap();
    this.state.accepting = true;
    this.coordinator.start();
    this.leases.start();
    this.schedulePump();
  }

  /**
   * Inside the caller's transaction (`svc_send_message`'s): hands out this engine's free slots now
   * (the same choice as the pump: round-robin across users within their running bounds; the oldest
   * queued workflow of an idle project with no live build process of an earlier workflow, or an
   * answered one). The claims commit with the caller's transaction; call `launch` on the result
   * after the commit (the builders start then), or `abandon` when the transaction failed or is
   * run again (a store may retry a transaction after a deadlock: abandon the earlier attempt's first).
   * @returns the claims made, which tell whether a given workflow got a slot.
   */
  async offer(tx: Tx): Promise<EngineStarts> {
    const starts = this.newStarts();
    if (this.claims) await this.slotClaims.handOut(tx, starts);
    return starts;
  }

  /**
   * After a send's commit, for a workflow another runner has to start: waits up to `claimWaitMs` for another
   * runner to move the workflow out of `from` (`queued`: a claim; `waiting_for_input`: the holder
   * or a worker resumed it), woken by the store's notices.
   * @returns the workflow's row as last read (undefined when it is gone).
   */
  async awaitClaim(
    workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
    from: 'queued' | 'waiting_for_input',
  ): Promise<WorkflowRow | undefined> {
    const { store } = this.state.deps;
    const { claimWaitMs, pollIntervalMs } = this.settings;
    if (claimWaitMs === 0) return store.repos.workflows.findById(workflow.id);
    return waitForWorkflow(store, workflow, (row) => row?.status !== from, {
      timeoutMs: claimWaitMs,
      recheckMs: pollIntervalMs,
    });
  }

  /** Asks the engine to look for queued work soon (coalesced). */
  schedulePump(): void {
    this.coordinator.schedulePump();
  }

  /**
   * Stops the builder of a workflow already stored as `cancelling`, and records `cancelled` once it
   * has stopped (after the cancel timeout its process groups are killed first). For a workflow
   * another live runner holds, waits for that runner to record it, or for its lease to expire.
   * @returns when the workflow is terminal, or when the other runner did not finish in time.
   */
  cancel(workflowId: string): Promise<void> {
    return cancelWorkflow(this.state, this.groups, workflowId);
  }

  /**
   * A worker's SIGTERM (docs/workflows.md#draining): stops claiming at once; releases every
   * workflow waiting for input (as `shutdown` does: it keeps waiting, and any runner resumes it
   * after the answer), also one whose question comes during the drain; and waits up to
   * `timeoutMs` for the running builds to end on their own. Leases stay renewed and cancels
   * honoured meanwhile. Call `shutdown` afterwards for what still runs.
   * @param timeoutMs longest wait for running builds, in ms.
   */
  async drain(timeoutMs: number): Promise<void> {
    const { state } = this;
    state.accepting = false;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      for (const run of state.runs.values()) if (run.waiting) run.abort('shutdown');
      const runs = [...state.runs.values()];
      const left = deadline - Date.now();
      if (runs.length === 0 || left <= 0) return;
      // A build that asks a question while the drain goes on is released at the next look. A run
      // claimed by a commit still in flight has no builder yet (its `done` is settled): the timer
      // turn keeps this loop from spinning on settled promises while that commit completes.
      await Promise.race([
        Promise.allSettled(runs.map((r) => r.done)),
        delay(Math.min(left, 250, this.settings.pollIntervalMs), undefined, { ref: false }),
      ]);
      await delay(0, undefined, { ref: false });
    }
  }

  /**
   * Graceful shutdown (SIGTERM/SIGINT; docs/workflows.md "Shutdown"): stops taking work, stops
   * every builder, kills their process groups, and records what was interrupted (`running` ->
   * `failed` with `error.code = "interrupted"`; a workflow waiting for input keeps waiting, its
   * lease given up).
   */
  async shutdown(): Promise<void> {
    const { state } = this;
    state.accepting = false;
    state.stopped = true;
    this.coordinator.stop();
    const runs = [...state.runs.values()];
    for (const run of runs) run.abort('shutdown');
    await Promise.race([
      Promise.allSettled(runs.map((r) => r.done)),
      delay(this.settings.cancelTimeoutMs, undefined, { ref: false }),
    ]);
    // Builders that did not stop in time: kill their processes and record the outcome ourselves.
    for (const run of [...state.runs.values()]) {
      await this.groups.killRun(run);
      await recordEnd(state, run, null);
    }
    this.leases.stop();
    this.reaper.cancelWake();
  }

  /** A new, empty record of one transaction's claims, whose builders start through this engine. */
  private newStarts(): EngineStarts {
    return new EngineStarts({
      holdSlot: (delta) => this.state.holdSlot(delta),
      begin: (row, run) => this.builderRuns.begin(row, run),
      forget: (run) => this.state.forget(run),
    });
  }
}
