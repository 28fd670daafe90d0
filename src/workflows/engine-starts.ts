/**
 * The claims and resumptions one store transaction made for an engine (docs/workflows.md "The
 * claim"): their slots are held from the claim on; `launch` (after COMMIT) starts their builders,
 * `abandon` (after a rollback) gives the slots back.
 */
import type { WorkflowRow } from '../store/rows.js';
import type { LocalRun } from './local-run.js';

/** What `EngineStarts` needs of its engine. */
export interface StartsHost {
  /** Takes (1) or gives back (-1) a slot held for a resumption until its commit. */
  holdSlot(delta: 1 | -1): void;
  /** Starts the builder of a claimed run, after its claim committed. */
  begin(row: WorkflowRow, run: LocalRun): void;
  /** Forgets a run whose claim was rolled back. */
  forget(run: LocalRun): void;
}

/** The claims and resumptions of one transaction (see the file comment). */
export class EngineStarts {
  private readonly claimed: { row: WorkflowRow; run: LocalRun }[] = [];
  private readonly resumed: { run: LocalRun; answer: string }[] = [];
  private settled = false;

  constructor(private readonly host: StartsHost) {}

  /** Whether workflow `workflowId` was claimed or resumed by this transaction. */
  started(workflowId: string): boolean {
    return (
      this.claimed.some((c) => c.row.id === workflowId) || this.resumed.some((r) => r.run.workflowId === workflowId)
    );
  }

  /** @internal A claimed run (its slot is held through the engine's runs). */
  launching(claim: { row: WorkflowRow; run: LocalRun }): void {
    this.claimed.push(claim);
  }

  /** @internal A waiting run of this engine moved back to `running` with `answer` (its slot is held until launch). */
  resuming(run: LocalRun, answer: string): void {
    this.host.holdSlot(1);
    this.resumed.push({ run, answer });
  }

  /** After COMMIT: starts the claimed builders and hands the answers to the resumed ones. Once. */
  launch(): void {
    if (this.settled) return;
    this.settled = true;
    for (const { row, run } of this.claimed) this.host.begin(row, run);
    for (const { run, answer } of this.resumed) {
      this.host.holdSlot(-1);
      run.waiting?.resolve(answer);
    }
  }

  /** After a rollback: nothing was claimed after all. Once. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    for (const { run } of this.claimed) this.host.forget(run);
    for (let i = 0; i < this.resumed.length; i++) this.host.holdSlot(-1);
  }
}
