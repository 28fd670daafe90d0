/**
 * What wakes an engine (docs/workflows.md "Change notices"): the store's change notices (`queued`:
 * pump; `workflow`: re-read a run it holds, and serve an answer check; a reset: all of it), and the
 * tick as the fallback (re-read every run, reap, pump, serve and sweep answer checks). The pump
 * hands out free slots in one transaction (`slot-claims.ts`) and starts the claimed builders
 * after it commits.
 */
import type { AnswerCheckRunner } from './answer-check-runner.js';
import type { EngineStarts } from './engine-starts.js';
import type { EngineState } from './engine-state.js';
import type { LeaseHeartbeat } from './lease-heartbeat.js';
import type { LocalRun } from './local-run.js';
import type { Reaper } from './reaper.js';
import type { SlotClaims } from './slot-claims.js';

/** The parts of the engine the coordinator drives. */
export interface CoordinatedParts {
  /** The pump's hand-out of free slots. */
  claims: SlotClaims;
  /** Run at each tick. */
  reaper: Reaper;
  /** Told of a run another runner took over (found on a re-read). */
  leases: LeaseHeartbeat;
  /** Answers sent through other nodes, checked here (docs/workflows.md "Where answers are checked"). */
  answerChecks: AnswerCheckRunner;
  /** A new, empty record of one transaction's claims. */
  newStarts(): EngineStarts;
}

/** Schedules the engine's pump, re-reads and ticks (see the file comment). */
export class Coordinator {
  private tickTimer: NodeJS.Timeout | undefined;
  /** The pump's retry after a contender's project was locked elsewhere (`pumpSoon`). */
  private retryTimer: NodeJS.Timeout | undefined;
  private pumpQueued = false;
  private ticking = false;
  /** Unsubscribes from the store's change notices (set while started). */
  private unlisten: (() => void)[] = [];
  /** Local runs to re-read soon because a notice named them (`all`: every one, after a reset). */
  private recheckQueued: Set<string> | 'all' | undefined;

  constructor(
    private readonly state: EngineState,
    private readonly parts: CoordinatedParts,
  ) {}

  /** Subscribes to the store's change notices and starts the tick (every `settings.pollIntervalMs`). */
  start(): void {
    this.listen();
    this.tickTimer = setInterval(() => void this.tick(), this.state.settings.pollIntervalMs);
    this.tickTimer.unref();
  }

  /** Stops the tick, the pump's retry and the notices. */
  stop(): void {
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const stop of this.unlisten.splice(0)) stop();
  }

  /** Asks the engine to look for queued work soon (coalesced); nothing while it does not take work. */
  schedulePump(): void {
    if (this.pumpQueued || !this.state.accepting || !this.state.settings.claims) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump().catch((error: unknown) => this.state.deps.logger.error({ err: error }, 'workflow pump failed'));
    });
  }

  /** Pumps again shortly: a contender was skipped because another transaction held its project's row. */
  pumpSoon(): void {
    if (this.retryTimer || this.state.stopped) return;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        this.schedulePump();
      },
      Math.min(50, this.state.settings.pollIntervalMs),
    );
    this.retryTimer.unref();
  }

  /**
   * Hands out free slots (docs/workflows.md, "Fair shares") in one transaction, and starts the
   * claimed builders after it commits.
   */
  private async pump(): Promise<void> {
    const { state } = this;
    // No free slot: nothing to hand out (and no transaction to open for it).
    if (!state.accepting || !state.settings.claims || state.busy >= state.settings.maxConcurrent) return;
    let starts: EngineStarts | undefined;
    try {
      await state.deps.store.transaction((tx) => {
        // A deadlock runs this again (PostgreSQL): the claims of the attempt rolled back are given back.
        starts?.abandon();
        starts = this.parts.newStarts();
        return this.parts.claims.handOut(tx, starts);
      });
    } catch (error) {
      starts?.abandon();
      throw error;
    }
    starts?.launch();
  }

  /**
   * Subscribes to the store's change notices: `queued` pumps; `workflow` re-reads a run this
   * engine holds (a cancel or an answer stored through another node); a reset (notices may have
   * been missed) does both for everything.
   */
  private listen(): void {
    const { state } = this;
    const { events } = state.deps.store;
    this.unlisten = [
      events.subscribe('queued', () => this.schedulePump()),
      events.subscribe('workflow', (id) => {
        if (state.runs.has(id)) this.scheduleRecheck(id);
        // An answer sent through a node that could not check it: this engine checks it if it
        // holds the workflow, or takes work and nobody holds it.
        if (state.runs.has(id) || state.settings.claims) setImmediate(() => void this.parts.answerChecks.serve(id));
      }),
      // A lost connection: the database may be out, no runner can renew its leases meanwhile.
      events.onConnectionLost?.(() => state.reapGate.storeFailed()) ?? (() => undefined),
      events.onReset(() => {
        // The change-notice connection came back: the database was out, leases could not be renewed.
        state.reapGate.reconnected();
        this.schedulePump();
        this.scheduleRecheck('all');
        this.serveAnswerChecks();
      }),
    ];
  }

  /** Runs every open answer check that is this engine's soon (after a reset, and at each tick); none on an engine that neither holds nor claims. */
  private serveAnswerChecks(): void {
    if (this.state.stopped || (!this.state.settings.claims && this.state.runs.size === 0)) return;
    setImmediate(() => void this.parts.answerChecks.serve());
  }

  /** Re-reads local runs soon (coalesced): one, or every one. */
  private scheduleRecheck(which: string | 'all'): void {
    if (this.state.stopped) return;
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
      const runs = [...this.state.runs.values()].filter((run) => queued === 'all' || queued?.has(run.workflowId));
      this.recheckRuns(runs).catch((error: unknown) =>
        this.state.deps.logger.error({ err: error }, 'workflow recheck failed'),
      );
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
      const row = await this.state.deps.store.repos.workflows.findById(run.workflowId);
      if (!row || row.runnerId !== this.state.runner.id) this.parts.leases.leaseLost(run);
      else if (row.status === 'cancelling') run.abort('cancel');
      else if (run.waiting && row.status === 'running') await this.resolveIfAnswered(run);
      else if (run.waiting && row.status === 'waiting_for_input') this.schedulePump();
    }
  }

  /** Hands a waiting run its answer when one is stored. */
  private async resolveIfAnswered(run: LocalRun): Promise<void> {
    if (!run.waiting) return;
    const question = await this.state.deps.store.repos.questions.findById(run.waiting.questionId);
    if (question?.answer != null) run.waiting?.resolve(question.answer);
  }

  private async tick(): Promise<void> {
    // A tick that outlasts the interval (a busy store) is not run twice at once.
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.state.runs.size > 0) await this.recheckRuns([...this.state.runs.values()]);
      await this.parts.reaper.reap();
      await this.pump();
      this.serveAnswerChecks();
      await this.parts.answerChecks.sweep(this.state.now());
    } catch (error) {
      this.state.deps.logger.error({ err: error }, 'workflow engine tick failed');
    } finally {
      this.ticking = false;
    }
  }
}
