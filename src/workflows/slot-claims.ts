/**
 * The engine's claims (docs/workflows.md "The claim" and "Fair shares"): inside one store
 * transaction it hands out its free slots, round-robin across users within their plans' running
 * bounds (`claims.ts`, `fair-shares.ts`). A slot goes to the oldest queued workflow of an idle
 * project with no live build process of an earlier workflow (a compare-and-set `queued -> running`
 * with this runner and a lease), or to an answered workflow (`waiting_for_input -> running`),
 * which this engine resumes in memory or, when nobody holds it, claims and runs again.
 */
import { limitsFor, workflowBounds } from '../limits/plans.js';
import type { SlotCandidate } from '../store/repos.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';
import { claimFreeSlots } from './claims.js';
import type { EngineStarts } from './engine-starts.js';
import type { EngineState } from './engine-state.js';
import { FairShares } from './fair-shares.js';
import type { GroupSweeps } from './group-sweeps.js';
import { kindLabel } from './workflow-journal.js';

/** Hands out one engine's free slots (see the file comment); the turns of its users are its memory. */
export class SlotClaims {
  private readonly shares = new FairShares();

  constructor(
    private readonly state: EngineState,
    private readonly groups: GroupSweeps,
    /** Asks for another hand-out shortly: a contender was skipped because another transaction held its project or owner. */
    private readonly pumpSoon: () => void,
  ) {}

  /**
   * Inside `tx`: while this engine takes work and has a free slot, the next contender is chosen
   * round-robin across users within their running bounds, and claimed into `starts` under its
   * owner's lock. Nothing when the engine does not take work or claims nothing.
   */
  async handOut(tx: Tx, starts: EngineStarts): Promise<void> {
    const { state } = this;
    if (!state.accepting || !state.settings.claims) return;
    const { plans } = state.deps;
    await claimFreeSlots(
      tx,
      {
        runnerId: state.runner.id,
        builderName: state.builder.name,
        hasFreeSlot: () => state.hasFreeSlot(),
        holdSlot: (delta) => state.holdSlot(delta),
        maxRunning: (plan) => workflowBounds(limitsFor(plans, plan)).maxRunning,
        startContender: (t, contender) => this.startContender(t, contender, starts),
        pumpSoon: () => this.pumpSoon(),
      },
      this.shares,
    );
  }

  /** Starts a contender inside `tx`: the claim of a queued workflow, or the resumption of an answered one. @returns false when it could not. */
  private async startContender(tx: Tx, contender: SlotCandidate, starts: EngineStarts): Promise<boolean> {
    const { ownerId: _owner, plan: _plan, ...row } = contender;
    // The project's row lock serialises the claim with sends to the project on every node. Without
    // waiting: a send's transaction holds its own project's lock already, and waiting for another
    // one could deadlock two nodes; a project locked elsewhere is skipped (its pump runs after).
    if (!(await tx.tryLock('projects', row.projectId))) {
      this.pumpSoon();
      return false;
    }
    if (row.status === 'queued') return this.claimQueued(tx, row, starts);
    return this.resume(tx, row, starts);
  }

  /** The claim inside `tx`: one compare-and-set `queued -> running` with this runner and a lease, plus its message. */
  private async claimQueued(tx: Tx, row: WorkflowRow, starts: EngineStarts): Promise<boolean> {
    const { state } = this;
    if (await this.groups.liveOnProject(tx, row.projectId)) return false;
    const claimed = await state.deps.journal.claim(
      tx,
      row,
      { ...state.claimPatch(), startedAt: state.deps.journal.now() },
      {
        role: 'system',
        type: 'status',
        content: `${kindLabel(row.kind)} started (builder: ${state.builder.name}).`,
      },
    );
    if (claimed) starts.launching(state.reserve({ ...row, status: 'running', runnerId: state.runner.id }));
    return claimed;
  }

  /** An answered workflow inside `tx`: resumed in this process when its builder waits here, else claimed and run again. */
  private async resume(tx: Tx, row: WorkflowRow, starts: EngineStarts): Promise<boolean> {
    const { state } = this;
    const { journal } = state.deps;
    const run = state.runs.get(row.id);
    if (row.runnerId === state.runner.id && run) {
      // The builder waits in this process's memory: take the slot and hand it the answer.
      if (!run.waiting) return false;
      const moved = await journal.transition(row, 'waiting_for_input', 'answer', {
        patch: { leaseExpiresAt: state.now() + state.settings.leaseMs },
        owner: state.runner.id,
        tx,
      });
      if (!moved) return false;
      const answer = (await tx.questions.findById(run.waiting.questionId))?.answer;
      if (answer != null) starts.resuming(run, answer);
      return true;
    }
    // Nobody holds it (its server stopped): claim it and run its builder again.
    const claimed = await journal.transition(row, 'waiting_for_input', 'answer', {
      patch: state.claimPatch(),
      owner: row.runnerId,
      tx,
    });
    if (claimed) starts.launching(state.reserve({ ...row, status: 'running', runnerId: state.runner.id }));
    return claimed;
  }
}
