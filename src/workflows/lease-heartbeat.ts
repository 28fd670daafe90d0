/**
 * The leases of the runs this engine holds (docs/workflows.md "Leases"): while a builder runs, a
 * heartbeat renews its lease by a compare-and-set on (id, runner); a runner that finds it lost the
 * lease aborts its builder, kills its process groups and writes nothing more.
 */
import { isStoreUnavailable } from '../store/unavailable.js';
import type { EngineState } from './engine-state.js';
import type { GroupSweeps } from './group-sweeps.js';
import type { LocalRun } from './local-run.js';

/** Renews this engine's leases on a timer, and stops the runs that lost theirs. */
export class LeaseHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  /** A heartbeat is under way: during an outage a renewal may wait for its bounds, and none piles up behind it. */
  private beating = false;

  constructor(
    private readonly state: EngineState,
    private readonly groups: GroupSweeps,
  ) {}

  /** Renews every `settings.heartbeatMs` from now on (the timer does not keep the process alive). */
  start(): void {
    this.timer = setInterval(() => void this.beat(), this.state.settings.heartbeatMs);
    this.timer.unref();
  }

  /** Stops renewing. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * This runner lost `run`'s workflow: stop the builder and its processes, write nothing more.
   * A write refused once the run is recording its own end (a cancelled builder's last output
   * arriving after `cancelled` was written) has lost nothing: the end is this runner's.
   */
  leaseLost(run: LocalRun): void {
    if (run.lost || run.finishing) return;
    run.lost = true;
    this.state.deps.logger.warn({ workflowId: run.workflowId }, 'lost the lease of a workflow: stopping its builder');
    run.abort('lease_lost');
    void this.groups.killRun(run);
  }

  /** Renews the lease of every local run; a run whose renewal fails has lost its workflow. Never throws. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    const { store, logger } = this.state.deps;
    try {
      for (const run of [...this.state.runs.values()]) {
        // A claim whose transaction has not committed is not in the store yet (on PostgreSQL this
        // renewal runs beside it and would not see it).
        if (run.lost || !run.launched) continue;
        // The new end is computed once the write lock is held: a renewal that waited for another
        // process's lock never writes an end that has already passed (docs/workflows.md, "Leases").
        const renewed = await store.transaction((tx) =>
          tx.workflows.renewLease(run.workflowId, this.state.runner.id, this.state.now() + this.state.settings.leaseMs),
        );
        // A run recording its end (packing its snapshot, publishing) keeps its lease until the end
        // is written; a renewal that finds it written already (runner cleared) has lost nothing.
        if (!renewed && !run.finishing) this.leaseLost(run);
      }
    } catch (error) {
      if (isStoreUnavailable(error)) this.state.reapGate.storeFailed();
      logger.error({ err: error }, 'lease heartbeat failed');
    } finally {
      this.beating = false;
    }
  }
}
