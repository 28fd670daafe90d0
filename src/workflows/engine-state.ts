/**
 * What every part of one workflow engine shares (docs/workflows.md): its settings and services, the
 * runs this process holds, its slots, whether it takes work, and the clock leases are written in.
 * The parts (`slot-claims.ts`, `builder-runs.ts`, `lease-heartbeat.ts`, `reaper.ts`,
 * `group-sweeps.ts`, `coordinator.ts`) each get this one object from `workflow-engine.ts`.
 */
import type { Builder } from '../builders/builder.js';
import type { WorkflowRow } from '../store/rows.js';
import type { EngineSettings, WorkflowEngineDeps } from './engine-options.js';
import { LocalRun } from './local-run.js';
import { ReapGate } from './reap-gate.js';
import { isDeadOnThisHost, type RunnerIdentity } from './runner-identity.js';

/** The shared state of one engine (see the file comment). */
export class EngineState {
  /** `runs`, changed only by `reserve`, `forget` and `release`, which report its new size to the observer. */
  private readonly runMap = new Map<string, LocalRun>();
  /** False before `start`, and from a drain or shutdown on: no claim is made. */
  accepting = false;
  /** True from shutdown on: no timer is set again. */
  stopped = false;
  /** Holds the reaper back for a full lease after a store outage (`reap-gate.ts`). */
  readonly reapGate: ReapGate;
  /** Slots taken by claims whose transaction has not committed yet (their runs are not counted otherwise). */
  private reserved = 0;

  constructor(
    readonly deps: WorkflowEngineDeps,
    readonly settings: EngineSettings,
    readonly runner: RunnerIdentity,
  ) {
    this.reapGate = new ReapGate(settings.leaseMs);
  }

  /** The runs this process holds, by workflow id: claimed (committed or not), running or waiting for an answer. */
  get runs(): ReadonlyMap<string, LocalRun> {
    return this.runMap;
  }

  /**
   * The builder of the workflows this engine claims.
   * @throws Error when the engine has none (it claims nothing: `settings.claims` is false).
   */
  get builder(): Builder {
    if (!this.deps.builder) throw new Error('A workflow engine that claims workflows needs a builder');
    return this.deps.builder;
  }

  /** Now on the database's clock, in ms since the epoch: what every lease end is written and compared in. */
  now(): number {
    return this.deps.clock().getTime() + this.deps.store.clockOffsetMs();
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

  /** True while this engine takes work and has a free slot. */
  hasFreeSlot(): boolean {
    return this.accepting && this.busy < this.settings.maxConcurrent;
  }

  /** Takes (1) or gives back (-1) a slot held in memory until a claim's or resumption's commit. */
  holdSlot(delta: 1 | -1): void {
    this.reserved += delta;
  }

  /** What a claim writes: this runner, and a lease that ends a lease from now (database clock). */
  claimPatch(): Partial<WorkflowRow> {
    return { runnerId: this.runner.id, leaseExpiresAt: this.now() + this.settings.leaseMs };
  }

  /** Takes a slot for a run claimed in a transaction that has not committed yet. */
  reserve(row: WorkflowRow): { row: WorkflowRow; run: LocalRun } {
    const run = new LocalRun(row.id, row.projectId);
    this.runMap.set(row.id, run);
    this.heldChanged();
    return { row, run };
  }

  /** Forgets a run whose claim was rolled back (not one that replaced it since). */
  forget(run: LocalRun): void {
    if (this.runs.get(run.workflowId) === run) this.release(run.workflowId);
  }

  /** Forgets the run of `workflowId`, which ended here. */
  release(workflowId: string): void {
    if (this.runMap.delete(workflowId)) this.heldChanged();
  }

  /** Reports the number of runs held now to the observer (the metrics measure the event-loop delay while it is above 0). */
  private heldChanged(): void {
    this.deps.observer?.heldChanged(this.runs.size);
  }

  /** The runner that still holds `row`'s lease, or null when none does (expired, none, or dead on this host). */
  liveHolder(row: WorkflowRow): string | null {
    if (!row.runnerId) return null;
    if (row.runnerId === this.runner.id) return this.runs.has(row.id) ? row.runnerId : null;
    if (row.leaseExpiresAt === null || row.leaseExpiresAt <= this.now()) return null;
    if (isDeadOnThisHost(row.runnerId, this.runner)) return null;
    return row.runnerId;
  }
}
