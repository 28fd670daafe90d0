/**
 * The workflow engine (docs/workflows.md): it owns the only claim path, runs builders under
 * leases, and reaps what other runners left. The database is the source of truth:
 *
 * - Every start is a compare-and-set `queued -> running` (oldest queued of its project, project
 *   idle) or `waiting_for_input -> running` (answered), in a store transaction that also writes
 *   this runner's id and a lease end: the pump's own, or the sending tool's (`offer`), so that a
 *   send that finds a free slot answers `running` exactly as before. The builder starts after
 *   the commit. Both take a free slot of this engine: an answered
 *   workflow waits for one like a queued one, and the next to start is chosen round-robin across
 *   users within their plans' running bounds (`fair-shares.ts`).
 * - While a builder runs, a heartbeat renews the lease by a compare-and-set on (id, runner); a
 *   runner that finds it lost the lease aborts its builder, kills its process groups and writes
 *   nothing more. Every write of a run is such a compare-and-set.
 * - A reaper in every engine (the tick; start-up recovery is the same code) takes over expired
 *   leases: `running` -> `failed` (`interrupted`), `cancelling` -> `cancelled`, and a
 *   `waiting_for_input` workflow only loses its runner (its question stays).
 * - Process groups a build reports are recorded; whoever ends or takes over a workflow on the
 *   same host kills them, and no workflow of the project is claimed while one lives.
 * - Several nodes share the store: leases are written and compared on the database's clock, the
 *   store's change notices wake the engine (`queued`: pump; `workflow`: re-read a run it holds;
 *   a reset: both), and the tick stays as the fallback. An engine with `claims: false` (the `api`
 *   role) never claims or runs anything: it reaps, stores cancels and answers, and waits for the
 *   workers that do (docs/workflows.md "Nodes that claim nothing").
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Builder, BuildJob } from '../builders/builder.js';
import { BuildFailure } from '../builders/builder.js';
import type { Clock } from '../clock.js';
import { DEFAULTS } from '../config/defaults.js';
import { redactPaths } from '../io/path-redaction.js';
import { limitsFor, workflowBounds, type PlanTable } from '../limits/plans.js';
import type { Logger } from '../logger.js';
import type { SlotCandidate } from '../store/repos.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import type { ArtifactPublisher } from './artifact-publisher.js';
import type { ArtifactStore } from './artifact-store.js';
import { AnswerCheckRunner } from './answer-check-runner.js';
import { EngineBuildContext } from './build-context.js';
import { claimFreeSlots } from './claims.js';
import { FairShares } from './fair-shares.js';
import { LeaseLostError, LocalRun } from './local-run.js';
import { ReapGate } from './reap-gate.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { isGroupAlive, isReusedGroup, killGroup } from './process-groups.js';
import { isDeadOnThisHost, newRunnerIdentity, type RunnerIdentity } from './runner-identity.js';
import { runOutcome, type RunObserver } from './run-observer.js';
import { isStoreFailure, STORE_FAILURE_MESSAGE } from './store-failure.js';
import { kindLabel, type NewMessage, type WorkflowJournal } from './workflow-journal.js';
import { waitForWorkflow } from './workflow-wait.js';
import type { CompletionHook, WorkspaceSync } from './workspace-sync.js';


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
  /** Workspace snapshots, with a store that has blobs (docs/postgresql.md#workspace-snapshots); absent: the workspace stays on this disk. */
  workspaceSync?: WorkspaceSync;
}


const INTERRUPTED_BY_STOP = 'The server running this workflow stopped or lost contact. Send the instruction again to retry.';
const INTERRUPTED_AT_SHUTDOWN = 'The server shut down while this workflow was running. Send the instruction again to retry.';

/** Runs workflows: claims, runs under leases, resumes, cancels and reaps them (docs/workflows.md). */
export class WorkflowEngine {
  readonly runner: RunnerIdentity;
  private readonly runs = new Map<string, LocalRun>();
  private accepting = false;
  private stopped = false;
  private tickTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The reaper's wake at the earliest end of another runner's lease, when that comes before the next tick. */
  private reaperWake: { timer: NodeJS.Timeout; at: number } | undefined;
  private pumpQueued = false;
  private ticking = false;
  /** A heartbeat is under way: during an outage a renewal may wait for its bounds, and none piles up behind it. */
  private beating = false;
  /** Slots taken by claims whose transaction has not committed yet (their runs are not counted otherwise). */
  private reserved = 0;
  private readonly shares = new FairShares();
  private readonly maxConcurrent: number;
  private readonly pollIntervalMs: number;
  private readonly cancelTimeoutMs: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly killGraceMs: number;
  /** Whether this engine claims and runs workflows (see `WorkflowEngineOptions.claims`). */
  readonly claims: boolean;
  private readonly claimWaitMs: number;
  private readonly builder: Builder | undefined;
  /** Unsubscribes from the store's change notices (set while started). */
  private unlisten: (() => void)[] = [];
  /** Local runs to re-read soon because a notice named them (`all`: every one, after a reset). */
  private recheckQueued: Set<string> | 'all' | undefined;
  /** The pump's retry after a contender's project was locked elsewhere (`pumpSoon`). */
  private retryTimer: NodeJS.Timeout | undefined;
  /** Answers sent through other nodes, checked here (docs/workflows.md "Where answers are checked"). */
  private readonly answerChecks: AnswerCheckRunner;
  /** Holds the reaper back for a full lease after a store outage (`reap-gate.ts`). */
  private readonly reapGate: ReapGate;

  /**
   * @throws Error when `options.claims` is not false and `deps.builder` is missing.
   */
  constructor(
    private readonly deps: WorkflowEngineDeps,
    options: WorkflowEngineOptions,
  ) {
    this.maxConcurrent = Math.max(1, options.maxConcurrent);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.cancelTimeoutMs = options.cancelTimeoutMs ?? 15_000;
    this.leaseMs = Math.max(100, options.leaseMs ?? DEFAULTS.leaseMs);
    this.heartbeatMs = Math.max(10, options.heartbeatMs ?? Math.min(500, Math.floor(this.leaseMs / 5)));
    this.reapGate = new ReapGate(this.leaseMs);
    this.killGraceMs = Math.min(Math.max(0, options.killGraceMs ?? 2000), 10_000);
    this.runner = options.runner ?? newRunnerIdentity();
    this.claims = options.claims ?? true;
    this.claimWaitMs = Math.max(0, options.claimWaitMs ?? DEFAULTS.claimWaitMs);
    this.builder = deps.builder;
    if (this.claims && !this.builder) throw new Error('A workflow engine that claims workflows needs a builder');
    this.answerChecks = new AnswerCheckRunner({
      store: deps.store,
      workspacesDir: join(deps.dataDir, 'workspaces'),
      logger: deps.logger,
      runnerId: this.runner.id,
      holds: (id) => this.runs.get(id)?.waiting != null,
      takesWork: () => this.claims && this.accepting,
      workspaceSync: deps.workspaceSync,
    });
  }

  /** The runner id stored in the workflows this engine claims. */
  get runnerId(): string {
    return this.runner.id;
  }

  /**
   * Recovers what earlier runners left (the reaper's code path), then starts taking work (with
   * `claims: false`: starts the reaper's tick only) and listening to the store's change notices.
   */
  async start(): Promise<void> {
    await this.reap();
    this.accepting = true;
    this.listen();
    this.tickTimer = setInterval(() => void this.tick(), this.pollIntervalMs);
    this.tickTimer.unref();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
    this.schedulePump();
  }

  /** Number of workflows this process holds now, ones waiting for an answer included. */
  get held(): number {
    return this.reserved + this.runs.size;
  }

  /** Number of workflows this process runs now (not counting ones waiting for an answer). */
  get busy(): number {
    let n = this.reserved;
    for (const run of this.runs.values()) if (!run.waiting) n++;
    return n;
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
    const starts = new EngineStarts(this);
    if (this.claims) await this.pumpIn(tx, starts);
    return starts;
  }

  /**
   * After a send's commit, for a workflow another runner has to start: waits up to `claimWaitMs` for another
   * runner to move the workflow out of `from` (`queued`: a claim; `waiting_for_input`: the holder
   * or a worker resumed it), woken by the store's notices.
   * @returns the workflow's row as last read (undefined when it is gone).
   */
  async awaitClaim(workflow: Pick<WorkflowRow, 'id' | 'projectId'>, from: 'queued' | 'waiting_for_input'): Promise<WorkflowRow | undefined> {
    if (this.claimWaitMs === 0) return this.deps.store.repos.workflows.findById(workflow.id);
    return waitForWorkflow(this.deps.store, workflow, (row) => row?.status !== from, { timeoutMs: this.claimWaitMs, recheckMs: this.pollIntervalMs });
  }

  /** Pumps again shortly: a contender was skipped because another transaction held its project's row. */
  private pumpSoon(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.schedulePump();
    }, Math.min(50, this.pollIntervalMs));
    this.retryTimer.unref();
  }

  /** Asks the engine to look for queued work soon (coalesced). */
  schedulePump(): void {
    if (this.pumpQueued || !this.accepting || !this.claims) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump().catch((error: unknown) => this.deps.logger.error({ err: error }, 'workflow pump failed'));
    });
  }

  /**
   * Stops the builder of a workflow already stored as `cancelling`, and records `cancelled` once it
   * has stopped (after the cancel timeout its process groups are killed first). For a workflow
   * another live runner holds, waits for that runner to record it, or for its lease to expire.
   * @returns when the workflow is terminal, or when the other runner did not finish in time.
   */
  async cancel(workflowId: string): Promise<void> {
    const run = this.runs.get(workflowId);
    if (run) {
      run.abort('cancel');
      await Promise.race([run.done, delay(this.cancelTimeoutMs)]);
      if (this.runs.has(workflowId)) await this.killGroups(run);
      await this.recordStopped(workflowId, this.runner.id);
      return;
    }
    const deadline = Date.now() + this.cancelTimeoutMs + this.leaseMs;
    for (;;) {
      const row = await this.deps.store.repos.workflows.findById(workflowId);
      if (!row || row.status !== 'cancelling') return;
      if (!this.liveHolder(row)) {
        await this.killRecordedGroups(row.id);
        await this.recordStopped(workflowId, row.runnerId);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) return;
      // The holder heard the `workflow` notice: wait for it to record the end (a `project` notice),
      // or for its lease to run out (then this node records `cancelled` itself).
      const leaseLeft = (row.leaseExpiresAt ?? 0) - this.now() + 1;
      await waitForWorkflow(this.deps.store, row, (r) => r?.status !== 'cancelling', {
        timeoutMs: Math.max(1, Math.min(left, leaseLeft)),
        recheckMs: Math.min(100, this.pollIntervalMs),
      });
    }
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
    this.accepting = false;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      for (const run of this.runs.values()) if (run.waiting) run.abort('shutdown');
      const runs = [...this.runs.values()];
      const left = deadline - Date.now();
      if (runs.length === 0 || left <= 0) return;
      // A build that asks a question while the drain goes on is released at the next look. A run
      // claimed by a commit still in flight has no builder yet (its `done` is settled): the timer
      // turn keeps this loop from spinning on settled promises while that commit completes.
      await Promise.race([Promise.allSettled(runs.map((r) => r.done)), delay(Math.min(left, 250, this.pollIntervalMs))]);
      await delay(0);
    }
  }

  /**
   * Graceful shutdown (SIGTERM/SIGINT): stops taking work, stops every builder, kills their
   * process groups, and records what was interrupted (`running` -> `failed` with
   * `error.code = "interrupted"`; a workflow waiting for input keeps waiting, its lease given up).
   */
  async shutdown(): Promise<void> {
    this.accepting = false;
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const stop of this.unlisten.splice(0)) stop();
    const runs = [...this.runs.values()];
    for (const run of runs) run.abort('shutdown');
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), delay(this.cancelTimeoutMs)]);
    // Builders that did not stop in time: kill their processes and record the outcome ourselves.
    for (const run of [...this.runs.values()]) {
      await this.killGroups(run);
      await this.recordEnd(run, null);
    }
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.cancelReaperWake();
  }

  // --- internals -------------------------------------------------------------------------

  /** Now on the database's clock, in ms since the epoch: what every lease end is written and compared in. */
  private now(): number {
    return this.deps.clock().getTime() + this.deps.store.clockOffsetMs();
  }

  /**
   * Subscribes to the store's change notices: `queued` pumps; `workflow` re-reads a run this
   * engine holds (a cancel or an answer stored through another node); a reset (notices may have
   * been missed) does both for everything.
   */
  private listen(): void {
    const { events } = this.deps.store;
    this.unlisten = [
      events.subscribe('queued', () => this.schedulePump()),
      events.subscribe('workflow', (id) => {
        if (this.runs.has(id)) this.scheduleRecheck(id);
        // An answer sent through a node that could not check it: this engine checks it if it
        // holds the workflow, or takes work and nobody holds it.
        if (this.runs.has(id) || this.claims) setImmediate(() => void this.answerChecks.serve(id));
      }),
      // A lost connection: the database may be out, no runner can renew its leases meanwhile.
      events.onConnectionLost?.(() => this.reapGate.storeFailed()) ?? (() => undefined),
      events.onReset(() => {
        // The change-notice connection came back: the database was out, leases could not be renewed.
        this.reapGate.reconnected();
        this.schedulePump();
        this.scheduleRecheck('all');
        this.serveAnswerChecks();
      }),
    ];
  }

  /** Runs every open answer check that is this engine's soon (after a reset, and at each tick); none on an engine that neither holds nor claims. */
  private serveAnswerChecks(): void {
    if (this.stopped || (!this.claims && this.runs.size === 0)) return;
    setImmediate(() => void this.answerChecks.serve());
  }

  /** Re-reads local runs soon (coalesced): one, or every one. */
  private scheduleRecheck(which: string | 'all'): void {
    if (this.stopped) return;
    const first = this.recheckQueued === undefined;
    if (which === 'all' || this.recheckQueued === 'all') this.recheckQueued = 'all';
    else {
      const set: Set<string> = this.recheckQueued ?? new Set();
      set.add(which);
      this.recheckQueued = set;
    }
    if (!first) return;
    setImmediate(() => {
      const queued = this.recheckQueued;
      this.recheckQueued = undefined;
      const runs = [...this.runs.values()].filter((run) => queued === 'all' || queued?.has(run.workflowId));
      this.recheckRuns(runs).catch((error: unknown) => this.deps.logger.error({ err: error }, 'workflow recheck failed'));
    });
  }

  /**
   * Reads the rows of local runs again: one another runner took over is lost; a cancelled one is
   * aborted; an answered one resumes (at once if it kept its slot, else through the pump).
   */
  private async recheckRuns(runs: LocalRun[]): Promise<void> {
    for (const run of runs) {
      // A claim whose transaction has not committed is not in the store yet.
      if (run.lost || !run.launched || run.finishing) continue;
      const row = await this.deps.store.repos.workflows.findById(run.workflowId);
      if (!row || row.runnerId !== this.runner.id) this.leaseLost(run);
      else if (row.status === 'cancelling') run.abort('cancel');
      else if (run.waiting && row.status === 'running') await this.resolveIfAnswered(run);
      else if (run.waiting && row.status === 'waiting_for_input') this.schedulePump();
    }
  }

  private claimPatch(): Partial<WorkflowRow> {
    return { runnerId: this.runner.id, leaseExpiresAt: this.now() + this.leaseMs };
  }

  /** The runner that still holds `row`'s lease, or null when none does (expired, none, or dead on this host). */
  private liveHolder(row: WorkflowRow): string | null {
    if (!row.runnerId) return null;
    if (row.runnerId === this.runner.id) return this.runs.has(row.id) ? row.runnerId : null;
    if (row.leaseExpiresAt === null || row.leaseExpiresAt <= this.now()) return null;
    if (isDeadOnThisHost(row.runnerId, this.runner)) return null;
    return row.runnerId;
  }

  /** The claim inside `tx`: one compare-and-set `queued -> running` with this runner and a lease, plus its message. */
  private async claimIn(tx: Tx, row: WorkflowRow, starts: EngineStarts): Promise<boolean> {
    if (await this.projectHasLiveGroups(tx, row.projectId)) return false;
    const claimed = await this.deps.journal.claim(tx, row, { ...this.claimPatch(), startedAt: this.deps.journal.now() }, {
      role: 'system',
      type: 'status',
      content: `${kindLabel(row.kind)} started (builder: ${this.builder!.name}).`,
    });
    if (claimed) starts.launching(this.reserve({ ...row, status: 'running', runnerId: this.runner.id }));
    return claimed;
  }

  /**
   * True while a process group recorded for the project on this host lives (the next workflow
   * must not start over it). Groups found dead are forgotten. Groups of other hosts cannot be
   * checked from here; their own host's engines kill them (docs/workflows.md).
   */
  private async projectHasLiveGroups(tx: Tx, projectId: string): Promise<boolean> {
    let alive = false;
    for (const group of await tx.processGroups.listByProject(projectId)) {
      if (group.host !== this.runner.host) continue;
      if (isGroupAlive(group.pgid) && !isReusedGroup(group.pgid, group.leaderStart)) alive = true;
      else await tx.processGroups.remove(group.host, group.pgid);
    }
    return alive;
  }

  private async recordStopped(workflowId: string, owner: string | null): Promise<void> {
    const row = await this.deps.store.repos.workflows.findById(workflowId);
    if (!row) return;
    await this.deps.journal.transition(row, 'cancelling', 'stopped', { patch: { runnerId: null, leaseExpiresAt: null }, message: stoppedMessage(row), owner });
  }

  /**
   * The reaper (and start-up recovery): takes over every active workflow whose lease expired or
   * whose runner is known dead on this host, then kills process groups on this host that no live
   * runner holds.
   */
  private async reap(): Promise<void> {
    try {
      await this.reapOnce();
    } catch (error) {
      // An outage, not a lock held elsewhere (55P03): the leases could not be renewed meanwhile.
      if (isStoreUnavailable(error)) this.reapGate.storeFailed();
      throw error;
    }
  }

  /** One pass of the reaper (see `reap`); after a store outage it takes nothing over for a lease (`ReapGate`). */
  private async reapOnce(): Promise<void> {
    const { store, journal, logger } = this.deps;
    const reaped: string[] = [];
    let earliestLeaseEnd = Infinity;
    const active = await store.repos.workflows.listActive();
    const mayTakeOver = this.reapGate.mayTakeOver();
    for (const row of active) {
      if (this.runs.has(row.id)) continue;
      if (this.liveHolder(row)) {
        if (row.leaseExpiresAt !== null && row.runnerId !== this.runner.id) earliestLeaseEnd = Math.min(earliestLeaseEnd, row.leaseExpiresAt);
        continue;
      }
      if (!mayTakeOver) {
        // Its runner may be alive and renewing again soon: look once the store answered for a lease.
        earliestLeaseEnd = Math.min(earliestLeaseEnd, this.now() + this.reapGate.waitMs());
        continue;
      }
      await store.transaction(async (tx) => {
        // The project's row, then the workflow's: the order every transaction takes them in.
        await tx.lock('projects', row.projectId);
        await tx.lock('workflows', row.id);
        // Re-read inside the transaction: the runner may have renewed since the list was read.
        const current = await tx.workflows.findById(row.id);
        if (!current || current.runnerId !== row.runnerId || current.leaseExpiresAt !== row.leaseExpiresAt || current.status !== row.status) return;
        if (current.status === 'running') {
          if (
            await journal.transition(current, 'running', 'interrupt', {
              patch: { errorCode: 'interrupted', errorMessage: INTERRUPTED_BY_STOP, runnerId: null, leaseExpiresAt: null },
              message: { role: 'system', type: 'error', content: `${kindLabel(current.kind)} interrupted: ${INTERRUPTED_BY_STOP}` },
              owner: current.runnerId,
              tx,
            })
          ) {
            reaped.push(current.id);
            logger.warn({ workflowId: current.id, runnerId: current.runnerId }, 'workflow interrupted: its runner lost its lease');
          }
        } else if (current.status === 'cancelling') {
          if (await journal.transition(current, 'cancelling', 'stopped', { patch: { runnerId: null, leaseExpiresAt: null }, message: stoppedMessage(current), owner: current.runnerId, tx })) reaped.push(current.id);
        } else if (current.runnerId !== null && (await tx.workflows.releaseWaiting(current.id, current.runnerId))) {
          // Waiting for input: the question stays; whoever gets the answer resumes it (an answer
          // stored already makes it claimable now, on any node).
          tx.publish({ kind: 'queued', id: current.projectId });
          reaped.push(current.id);
        }
      });
    }
    // The projects of reaped workflows may start their next queued workflow.
    if (reaped.length > 0) {
      this.deps.observer?.leasesTakenOver(reaped.length);
      this.schedulePump();
    }
    this.wakeReaperAt(earliestLeaseEnd);
    void this.sweepGroups();
  }

  /**
   * Runs the reaper again just after `leaseEnd` (ms since the epoch) when that comes before the next
   * tick, so that a dead runner's workflow is taken over when its lease ends, not up to a tick later.
   * A renewed lease makes that reap find nothing and wake again at the new end.
   */
  private wakeReaperAt(leaseEnd: number): void {
    if (this.stopped || !Number.isFinite(leaseEnd)) return;
    const delayMs = Math.max(0, leaseEnd - this.now()) + 1;
    if (delayMs >= this.pollIntervalMs) return;
    const at = Date.now() + delayMs;
    if (this.reaperWake && this.reaperWake.at <= at) return;
    this.cancelReaperWake();
    const timer = setTimeout(() => {
      this.reaperWake = undefined;
      this.reap().catch((error: unknown) => this.deps.logger.error({ err: error }, 'workflow reaper failed'));
    }, delayMs);
    timer.unref();
    this.reaperWake = { timer, at };
  }

  private cancelReaperWake(): void {
    if (this.reaperWake) clearTimeout(this.reaperWake.timer);
    this.reaperWake = undefined;
  }

  /** Kills process groups recorded on this host whose workflow no live runner holds. */
  private async sweepGroups(): Promise<void> {
    const { processGroups, workflows } = this.deps.store.repos;
    let killed = 0;
    try {
      for (const group of await processGroups.listByHost(this.runner.host)) {
        const row = await workflows.findById(group.workflowId);
        if (row && this.runs.has(row.id) && row.runnerId === this.runner.id) continue;
        if (row && row.runnerId === group.runnerId && this.liveHolder(row)) continue;
        if (isReusedGroup(group.pgid, group.leaderStart)) {
          // The recorded group is gone and its id now names another process: forget it, never signal it.
          await processGroups.remove(group.host, group.pgid);
          continue;
        }
        if (await killGroup(group.pgid, this.killGraceMs)) {
          await processGroups.remove(group.host, group.pgid);
          killed++;
        } else this.deps.logger.error({ pgid: group.pgid, workflowId: group.workflowId }, 'a build process group survived SIGKILL');
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, 'sweeping build process groups failed');
    }
    // A project whose next workflow waited for these processes to die may start now.
    if (killed > 0) this.schedulePump();
  }

  private async killRecordedGroups(workflowId: string): Promise<void> {
    const { processGroups } = this.deps.store.repos;
    for (const group of await processGroups.listByHost(this.runner.host)) {
      if (group.workflowId !== workflowId) continue;
      if (isReusedGroup(group.pgid, group.leaderStart)) {
        await processGroups.remove(group.host, group.pgid);
        continue;
      }
      if (await killGroup(group.pgid, this.killGraceMs)) await processGroups.remove(group.host, group.pgid);
    }
  }

  /** Kills what is left of a local run's process groups (SIGTERM, then SIGKILL after the capped grace). */
  private async killGroups(run: LocalRun): Promise<void> {
    await Promise.all(
      [...run.groups].map(async ([pgid, leaderStart]) => {
        // A group that ended without being released may have handed its id to another process.
        if (isReusedGroup(pgid, leaderStart) || (await killGroup(pgid, this.killGraceMs))) {
          run.groups.delete(pgid);
          await this.deps.store.repos.processGroups.remove(this.runner.host, pgid);
        }
      }),
    );
  }

  /** Renews the lease of every local run; a run whose renewal fails has lost its workflow. */
  private async heartbeat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      for (const run of [...this.runs.values()]) {
        // A claim whose transaction has not committed is not in the store yet (on PostgreSQL this
        // renewal runs beside it and would not see it).
        if (run.lost || !run.launched) continue;
        // The new end is computed once the write lock is held: a renewal that waited for another
        // process's lock never writes an end that has already passed (docs/workflows.md, "Leases").
        const renewed = await this.deps.store.transaction((tx) => tx.workflows.renewLease(run.workflowId, this.runner.id, this.now() + this.leaseMs));
        // A run recording its end (packing its snapshot, publishing) keeps its lease until the end
        // is written; a renewal that finds it written already (runner cleared) has lost nothing.
        if (!renewed && !run.finishing) this.leaseLost(run);
      }
    } catch (error) {
      if (isStoreUnavailable(error)) this.reapGate.storeFailed();
      this.deps.logger.error({ err: error }, 'lease heartbeat failed');
    } finally {
      this.beating = false;
    }
  }

  /**
   * This runner lost `run`'s workflow: stop the builder and its processes, write nothing more.
   * A write refused once the run is recording its own end (a cancelled builder's last output
   * arriving after `cancelled` was written) has lost nothing: the end is this runner's.
   */
  private leaseLost(run: LocalRun): void {
    if (run.lost || run.finishing) return;
    run.lost = true;
    this.deps.logger.warn({ workflowId: run.workflowId }, 'lost the lease of a workflow: stopping its builder');
    run.abort('lease_lost');
    void this.killGroups(run);
  }

  private async tick(): Promise<void> {
    // A tick that outlasts the interval (a busy store) is not run twice at once.
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.runs.size > 0) await this.recheckRuns([...this.runs.values()]);
      await this.reap();
      await this.pump();
      this.serveAnswerChecks();
      await this.answerChecks.sweep(this.now());
    } catch (error) {
      this.deps.logger.error({ err: error }, 'workflow engine tick failed');
    } finally {
      this.ticking = false;
    }
  }

  private async resolveIfAnswered(run: LocalRun): Promise<void> {
    if (!run.waiting) return;
    const question = await this.deps.store.repos.questions.findById(run.waiting.questionId);
    if (question?.answer != null) run.waiting?.resolve(question.answer);
  }

  /**
   * Hands out free slots (docs/workflows.md, "Fair shares") in one transaction, and starts the
   * claimed builders after it commits.
   */
  private async pump(): Promise<void> {
    // No free slot: nothing to hand out (and no transaction to open for it).
    if (!this.accepting || !this.claims || this.busy >= this.maxConcurrent) return;
    let starts: EngineStarts | undefined;
    try {
      await this.deps.store.transaction((tx) => {
        // A deadlock runs this again (PostgreSQL): the claims of the attempt rolled back are given back.
        starts?.abandon();
        starts = new EngineStarts(this);
        return this.pumpIn(tx, starts);
      });
    } catch (error) {
      starts?.abandon();
      throw error;
    }
    starts?.launch();
  }

  /**
   * Inside `tx`: while this engine has a free slot, the next contender (a project's oldest queued
   * workflow, or an answered one this engine holds or nobody holds) is chosen round-robin across
   * users within their running bounds, and claimed into `starts` under its owner's lock (`claims.ts`).
   */
  private async pumpIn(tx: Tx, starts: EngineStarts): Promise<void> {
    if (!this.accepting || !this.claims) return;
    const { plans } = this.deps;
    await claimFreeSlots(tx, {
      runnerId: this.runner.id,
      builderName: this.builder!.name,
      hasFreeSlot: () => this.accepting && this.busy < this.maxConcurrent,
      holdSlot: (delta) => this.holdSlot(delta),
      maxRunning: (plan) => workflowBounds(limitsFor(plans, plan)).maxRunning,
      startContender: (t, contender) => this.startContender(t, contender, starts),
      pumpSoon: () => this.pumpSoon(),
    }, this.shares);
  }

  /** Starts a contender of `pump` inside `tx`: the claim of a queued workflow, or the resumption of an answered one. */
  private async startContender(tx: Tx, contender: SlotCandidate, starts: EngineStarts): Promise<boolean> {
    const { ownerId: _owner, plan: _plan, ...row } = contender;
    // The project's row lock serialises the claim with sends to the project on every node. Without
    // waiting: a send's transaction holds its own project's lock already, and waiting for another
    // one could deadlock two nodes; a project locked elsewhere is skipped (its pump runs after).
    if (!(await tx.tryLock('projects', row.projectId))) {
      this.pumpSoon();
      return false;
    }
    if (row.status === 'queued') return this.claimIn(tx, row, starts);
    const run = this.runs.get(row.id);
    if (row.runnerId === this.runner.id && run) {
      // The builder waits in this process's memory: take the slot and hand it the answer.
      if (!run.waiting) return false;
      const moved = await this.deps.journal.transition(row, 'waiting_for_input', 'answer', { patch: { leaseExpiresAt: this.now() + this.leaseMs }, owner: this.runner.id, tx });
      if (!moved) return false;
      const answer = (await tx.questions.findById(run.waiting.questionId))?.answer;
      if (answer != null) starts.resuming(run, answer);
      return true;
    }
    // Nobody holds it (its server stopped): claim it and run its builder again.
    const claimed = await this.deps.journal.transition(row, 'waiting_for_input', 'answer', { patch: this.claimPatch(), owner: row.runnerId, tx });
    if (claimed) starts.launching(this.reserve({ ...row, status: 'running', runnerId: this.runner.id }));
    return claimed;
  }

  /** Takes a slot for a run claimed in a transaction that has not committed yet. */
  private reserve(row: WorkflowRow): { row: WorkflowRow; run: LocalRun } {
    const run = new LocalRun(row.id, row.projectId);
    this.runs.set(row.id, run);
    return { row, run };
  }

  /** @internal (EngineStarts) Takes or gives back a slot held for a resumption until its commit. */
  holdSlot(delta: 1 | -1): void {
    this.reserved += delta;
  }

  /** @internal (EngineStarts) Starts the builder of a claimed run, after its claim committed. */
  begin(row: WorkflowRow, run: LocalRun): void {
    run.launched = true;
    run.done = this.execute(row, run)
      .catch((error) => this.deps.logger.error({ err: error, workflowId: row.id }, 'workflow run failed unexpectedly'))
      .finally(() => {
        this.runs.delete(row.id);
        this.schedulePump();
      });
  }

  /** @internal (EngineStarts) Forgets a run whose claim was rolled back. */
  forget(run: LocalRun): void {
    if (this.runs.get(run.workflowId) === run) this.runs.delete(run.workflowId);
  }

  private async execute(row: WorkflowRow, run: LocalRun): Promise<void> {
    const { logger } = this.deps;
    const builder = this.builder!;
    const { repos } = this.deps.store;
    const project = await repos.projects.findById(row.projectId);
    if (!project) return;
    const workspaceDir = join(this.deps.dataDir, 'workspaces', row.projectId);
    await mkdir(workspaceDir, { recursive: true });
    const job: BuildJob = {
      workflowId: row.id,
      kind: row.kind,
      instruction: row.instruction,
      project: { id: project.id, name: project.name, description: project.description, ownerId: project.ownerId },
      history: await repos.workflows.instructionsBefore(row.projectId, row.seq),
      workspaceDir,
      signal: run.controller.signal,
    };
    const context = new EngineBuildContext(row, run, { ...this.deps, runner: this.runner, workspaceDir, onLeaseLost: (r) => this.leaseLost(r) });
    logger.info({ workflowId: row.id, kind: row.kind }, 'workflow started');

    let failure: { code: string; message: string } | null = null;
    const startedAt = performance.now();
    try {
      await this.deps.workspaceSync?.restore(row.projectId, workspaceDir, (text) => context.say(text));
      await builder.run(job, context);
    } catch (error) {
      // On PostgreSQL a failed statement's message holds SQL and the database's address: not for the conversation.
      const lostStore = !(error instanceof BuildFailure) && this.deps.store.dialect === 'postgres' && isStoreFailure(error);
      if (lostStore) logger.error({ err: error, workflowId: row.id }, 'a build failed on a database statement');
      const raw =
        error instanceof BuildFailure
          ? { code: error.code, message: error.message }
          : { code: 'builder_error', message: lostStore ? STORE_FAILURE_MESSAGE : error instanceof Error ? error.message : String(error) };
      // Stored in the conversation, which other users may read on a public project: no server paths.
      failure = { code: raw.code, message: redactPaths(raw.message, { dataDir: this.deps.dataDir, workspaceDir }) };
      if (error instanceof LeaseLostError) this.leaseLost(run);
    }
    // Its own end is recorded below: a re-read of its row meanwhile must not take it for lost.
    run.finishing = true;
    // No process of this workflow outlives it.
    await this.killGroups(run);
    await this.recordEnd(run, failure);
    this.deps.observer?.runEnded({ builder: builder.name, kind: row.kind, outcome: runOutcome(run, failure !== null), seconds: (performance.now() - startedAt) / 1000 });
  }

  /** Writes how a run ended, as compare-and-sets on this runner (a run that lost its lease writes nothing). */
  private async recordEnd(run: LocalRun, failure: { code: string; message: string } | null): Promise<void> {
    if (run.lost) return;
    const { journal, logger } = this.deps;
    const { workflows } = this.deps.store.repos;
    const row = await workflows.findById(run.workflowId);
    if (!row || row.runnerId !== this.runner.id) return;
    const owner = this.runner.id;
    const cause = run.cause;
    const released = { runnerId: null, leaseExpiresAt: null };
    if (cause === 'shutdown') {
      if (row.status === 'running') {
        await journal.transition(row, 'running', 'interrupt', {
          patch: { errorCode: 'interrupted', errorMessage: INTERRUPTED_AT_SHUTDOWN, ...released },
          message: { role: 'system', type: 'error', content: `${kindLabel(row.kind)} interrupted: ${INTERRUPTED_AT_SHUTDOWN}` },
          owner,
        });
      } else if (row.status === 'waiting_for_input') await workflows.releaseWaiting(row.id, owner);
      else if (row.status === 'cancelling') await this.recordStopped(row.id, owner);
      return;
    }
    // A cancel that raced with the builder's end wins: the user asked for it.
    if (cause === 'cancel' || row.status === 'cancelling') {
      await this.recordStopped(row.id, owner);
      return;
    }
    if (failure) {
      await journal.transition(row, 'running', 'fail', {
        patch: { errorCode: failure.code, errorMessage: failure.message, ...released },
        message: { role: 'system', type: 'error', content: `${kindLabel(row.kind)} failed: ${failure.message}` },
        owner,
      });
      logger.info({ workflowId: row.id, code: failure.code }, 'workflow failed');
    } else {
      const complete = (hook?: CompletionHook) =>
        journal.transition(row, 'running', 'complete', { patch: released, message: { role: 'system', type: 'status', content: `${kindLabel(row.kind)} completed.` }, owner, onCompleted: hook });
      await (this.deps.workspaceSync?.complete(row, join(this.deps.dataDir, 'workspaces', row.projectId), complete) ?? complete());
      logger.info({ workflowId: row.id }, 'workflow completed');
    }
  }
}

/**
 * The claims and resumptions one transaction made for this engine: their slots are held from the
 * claim on; `launch` (after COMMIT) starts their builders, `abandon` (after a rollback) gives the
 * slots back.
 */
export class EngineStarts {
  private readonly claimed: { row: WorkflowRow; run: LocalRun }[] = [];
  private readonly resumed: { run: LocalRun; answer: string }[] = [];
  private settled = false;

  constructor(private readonly engine: WorkflowEngine) {}

  /** Whether workflow `workflowId` was claimed or resumed by this transaction. */
  started(workflowId: string): boolean {
    return this.claimed.some((c) => c.row.id === workflowId) || this.resumed.some((r) => r.run.workflowId === workflowId);
  }

  /** @internal A claimed run (its slot is held through `runs`). */
  launching(claim: { row: WorkflowRow; run: LocalRun }): void {
    this.claimed.push(claim);
  }

  /** @internal A waiting run of this engine moved back to `running` with `answer` (its slot is held until launch). */
  resuming(run: LocalRun, answer: string): void {
    this.engine.holdSlot(1);
    this.resumed.push({ run, answer });
  }

  /** After COMMIT: starts the claimed builders and hands the answers to the resumed ones. Once. */
  launch(): void {
    if (this.settled) return;
    this.settled = true;
    for (const { row, run } of this.claimed) this.engine.begin(row, run);
    for (const { run, answer } of this.resumed) {
      this.engine.holdSlot(-1);
      run.waiting?.resolve(answer);
    }
  }

  /** After a rollback: nothing was claimed after all. Once. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    for (const { run } of this.claimed) this.engine.forget(run);
    for (let i = 0; i < this.resumed.length; i++) this.engine.holdSlot(-1);
  }
}

function stoppedMessage(row: WorkflowRow): NewMessage {
  return { role: 'system', type: 'status', content: `${kindLabel(row.kind)} cancelled.` };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
