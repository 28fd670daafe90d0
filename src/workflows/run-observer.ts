/**
 * What the engine reports as it works, for the metrics (docs/metrics.md): how many workflows this
 * process holds, the end of each run on this runner and the leases its reaper takes over. The engine calls it after the store writes;
 * an observer only counts (it must not throw, block or write).
 */
import type { WorkflowRow } from '../store/rows.js';

/**
 * How a run on this runner ended: the builder returned (`completed`) or threw (`failed`), the
 * owner cancelled it (`cancelled`), or it stopped without an outcome of its own (`interrupted`:
 * this server shut down, or it lost its lease).
 */
export type RunOutcome = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** One finished run, as the metrics see it: no workflow, project or user id. */
export interface RunEnd {
  /** The builder's name (`expo`, `scripted`, `command`). */
  builder: string;
  kind: WorkflowRow['kind'];
  outcome: RunOutcome;
  /** From the builder's start on this runner to its end, in seconds (time waiting for an answer included). */
  seconds: number;
}

/** Receives the engine's reports. */
export interface RunObserver {
  /** The number of runs this process holds (claimed, running or waiting for an answer) changed to `held`. */
  heldChanged(held: number): void;
  /** A run on this runner ended (after its outcome was written, or not, when it lost its lease). */
  runEnded(end: RunEnd): void;
  /** The reaper took over `count` workflows whose runner's lease had expired (or whose runner died on this host). */
  leasesTakenOver(count: number): void;
}

/** The outcome of a run from what the engine knows when it ends (see `RunOutcome`). */
export function runOutcome(run: { lost: boolean; cause: string | null }, failed: boolean): RunOutcome {
  if (run.lost || run.cause === 'shutdown' || run.cause === 'lease_lost') return 'interrupted';
  if (run.cause === 'cancel') return 'cancelled';
  return failed ? 'failed' : 'completed';
}
