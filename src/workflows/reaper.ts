/**
 * The reaper (docs/workflows.md "Leases"), in every engine: at each tick, at start-up (recovery is
 * the same code) and just after the earliest end of another runner's lease, it takes over every
 * active workflow whose lease expired or whose runner is known dead on this host: `running` ->
 * `failed` (`interrupted`), `cancelling` -> `cancelled`, and a `waiting_for_input` workflow only
 * loses its runner (its question stays). Then it kills process groups on this host that no live
 * runner holds. After a store outage it takes nothing over for a lease (`reap-gate.ts`). Its reads
 * are bounded by the runners and the workflows it can take over, not by the active workflows of the
 * store (`WorkflowRepo.liveLeaseEnds`, `takeoverCandidates`): a tick with nothing to take over reads
 * one row per other live runner.
 */
import type { WorkflowRow } from '../store/rows.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { EngineState } from './engine-state.js';
import type { GroupSweeps } from './group-sweeps.js';
import { interrupted, stopped } from './run-endings.js';
import { isDeadOnThisHost } from './runner-identity.js';

/** Takes over what other runners left (see the file comment). */
export class Reaper {
  /** The wake at the earliest end of another runner's lease, when that comes before the next tick. */
  private wake: { timer: NodeJS.Timeout; at: number } | undefined;

  constructor(
    private readonly state: EngineState,
    private readonly groups: GroupSweeps,
    /** Called when workflows were taken over or process groups killed: projects may start their next workflow. */
    private readonly onFreed: () => void,
  ) {}

  /**
   * One pass of the reaper.
   * @throws the store's error when it could not be read or written (an outage also closes the reap gate).
   */
  async reap(): Promise<void> {
    try {
      await this.reapOnce();
    } catch (error) {
      // An outage, not a lock held elsewhere (55P03): the leases could not be renewed meanwhile.
      if (isStoreUnavailable(error)) this.state.reapGate.storeFailed();
      throw error;
    }
  }

  /** Cancels the pending wake (at shutdown). */
  cancelWake(): void {
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = undefined;
  }

  /**
   * One pass of the reaper (see `reap`). It reads only what it can act on (docs/workflows.md
   * "Leases"): the earliest live lease end of each other runner, then the workflows no live runner
   * holds; never every active workflow. Both reads compare leases with one `now` on the database's
   * clock, and leave out the workflows this process holds.
   */
  private async reapOnce(): Promise<void> {
    const { runs, reapGate, runner } = this.state;
    const { workflows } = this.state.deps.store.repos;
    const now = this.state.now();
    const held = [...runs.keys()];
    let earliestLeaseEnd = Infinity;
    // A runner of this host that is gone holds nothing, whatever its leases say; the others' leases
    // are what the wake waits for.
    const dead: string[] = [];
    for (const lease of await workflows.liveLeaseEnds(runner.id, now, held)) {
      if (isDeadOnThisHost(lease.runnerId, runner)) dead.push(lease.runnerId);
      else earliestLeaseEnd = Math.min(earliestLeaseEnd, lease.leaseEnd);
    }
    const candidates = await workflows.takeoverCandidates(runner.id, now, held, dead);
    const mayTakeOver = reapGate.mayTakeOver();
    let reaped = 0;
    for (const row of candidates) {
      // Claimed or resumed by this process since the read.
      if (runs.has(row.id)) continue;
      if (!mayTakeOver) {
        // Its runner may be alive and renewing again soon: look once the store answered for a lease.
        earliestLeaseEnd = Math.min(earliestLeaseEnd, this.state.now() + reapGate.waitMs());
        continue;
      }
      if (await this.takeOver(row)) reaped++;
    }
    // The projects of reaped workflows may start their next queued workflow.
    if (reaped > 0) {
      this.state.deps.observer?.leasesTakenOver(reaped);
      this.onFreed();
    }
    this.wakeAt(earliestLeaseEnd);
    void this.groups.sweep().then((killed) => {
      // A project whose next workflow waited for these processes to die may start now.
      if (killed > 0) this.onFreed();
    });
  }

  /**
   * Takes `row` over in one transaction, unless its runner renewed or it moved on since it was read.
   * @returns true when it was taken over.
   */
  private takeOver(row: WorkflowRow): Promise<boolean> {
    const { journal, logger } = this.state.deps;
    return this.state.deps.store.transaction(async (tx) => {
      // The project's row, then the workflow's: the order every transaction takes them in.
      await tx.lock('projects', row.projectId);
      await tx.lock('workflows', row.id);
      // Re-read inside the transaction: the runner may have renewed since the list was read.
      const current = await tx.workflows.findById(row.id);
      if (
        !current ||
        current.runnerId !== row.runnerId ||
        current.leaseExpiresAt !== row.leaseExpiresAt ||
        current.status !== row.status
      )
        return false;
      const owner = current.runnerId;
      if (current.status === 'running') {
        const taken = await journal.transition(current, 'running', 'interrupt', {
          ...interrupted(current, 'stop'),
          owner,
          tx,
        });
        if (taken)
          logger.warn({ workflowId: current.id, runnerId: owner }, 'workflow interrupted: its runner lost its lease');
        return taken;
      }
      if (current.status === 'cancelling')
        return journal.transition(current, 'cancelling', 'stopped', { ...stopped(current), owner, tx });
      if (owner === null || !(await tx.workflows.releaseWaiting(current.id, owner))) return false;
      // Waiting for input: the question stays; whoever gets the answer resumes it (an answer
      // stored already makes it claimable now, on any node).
      tx.publish({ kind: 'queued', id: current.projectId });
      return true;
    });
  }

  /**
   * Runs the reaper again just after `leaseEnd` (ms since the epoch, database clock) when that comes
   * before the next tick, so that a dead runner's workflow is taken over when its lease ends, not up
   * to a tick later. A renewed lease makes that reap find nothing and wake again at the new end.
   */
  private wakeAt(leaseEnd: number): void {
    if (this.state.stopped || !Number.isFinite(leaseEnd)) return;
    const delayMs = Math.max(0, leaseEnd - this.state.now()) + 1;
    if (delayMs >= this.state.settings.pollIntervalMs) return;
    const at = Date.now() + delayMs;
    if (this.wake && this.wake.at <= at) return;
    this.cancelWake();
    const timer = setTimeout(() => {
      this.wake = undefined;
      this.reap().catch((error: unknown) => this.state.deps.logger.error({ err: error }, 'workflow reaper failed'));
    }, delayMs);
    timer.unref();
    this.wake = { timer, at };
  }
}
