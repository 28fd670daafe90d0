/**
 * SQL for workflows (docs/workflows.md). State changes are compare-and-set on the old status; the
 * caller (the workflow journal) decides which changes are legal. Where several nodes race
 * (PostgreSQL; SQLite has one writer at a time):
 *
 * - `nextSeq` takes the dialect's next number (`Dialect.nextWorkflowSeq`: never `max + 1` where
 *   two nodes could take the same);
 * - `claimQueued` takes the row with `Dialect.skipLocked` (a claim another node is making is
 *   skipped, not waited for);
 * - a change that would make a second active workflow of a project trips the unique index
 *   `workflows_one_active_per_project`: that is "lost the race", false;
 * - `isHeldBy` locks the row (`Dialect.forUpdate`), so the reaper's takeover waits for the
 *   holder's write and a runner that lost its lease writes nothing after;
 * - lease ends (`leaseExpiresAt`, Unix ms) are written as given: the engine computes them on the
 *   database's clock (`Date.now() + store.clockOffsetMs()`).
 */
import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { LeaseEnd, WorkflowRepo, SlotCandidate } from '../repos.js';
import { WORKFLOW_STATUSES, type WorkflowStatus } from '../../core/workflow-states.js';
import type { WorkflowRow } from '../rows.js';
import type { Dialect, Tables } from './dialect.js';
import {
  ACTIVE_SQL,
  ACTIVE_STATUSES,
  insertStatement,
  insertValues,
  projectReads,
  schedulerStatements,
} from './workflow-statements.js';

/** Queued rows `listQueued` keeps in memory, at most (about 1 KiB each). */
const QUEUED_ROWS_KEPT = 4096;
const ONE_ACTIVE_INDEX = 'workflows_one_active_per_project';

type Patch = Partial<WorkflowRow> & { status: WorkflowStatus };

/** Queued workflow rows by id, kept for `SqlWorkflowRepo.listQueued` (a queued row never changes while queued). */
export type QueuedRows = Map<string, WorkflowRow>;

/** Reads workflows and changes them by compare-and-set on the status (see the file comment). */
export class SqlWorkflowRepo implements WorkflowRepo {
  /** The statements of the reads, the heartbeat and the insert, built once. */
  private readonly q;
  /**
   * @param queuedRows queued rows by id, as read or inserted while queued (see `listQueued`): one
   *   map for the store's handle and every transaction's (PostgreSQL builds repositories per transaction).
   */
  constructor(
    private readonly d: Dialect,
    private readonly queuedRows: QueuedRows = new Map(),
  ) {
    this.q = { ...projectReads(d), ...schedulerStatements(d), insert: insertStatement(d) };
  }

  /** A fresh number of the FIFO order: increasing, never repeated, across every node. */
  async nextSeq(): Promise<number> {
    return this.d.nextWorkflowSeq();
  }

  /** Inserts a new workflow by the statement built once (a send's insert builds no SQL). */
  async insert(row: WorkflowRow): Promise<void> {
    const bound = insertValues(row);
    await this.q.insert.run(bound as unknown as Record<string, unknown>);
    // A queued row never changes while queued: kept as the queue's read would keep it, so the
    // send's queue position reads no rows again (a rolled-back insert leaves an entry no queue names).
    if (row.status === 'queued') this.keepQueued(bound);
  }

  async findById(id: string): Promise<WorkflowRow | undefined> {
    return this.q.byId.get({ id });
  }

  async findActive(projectId: string): Promise<WorkflowRow | undefined> {
    return this.q.active.get({ projectId });
  }

  async hasActive(projectId: string): Promise<boolean> {
    return (await this.q.activeId.pluck({ projectId })).length > 0;
  }

  /**
   * The project's queued workflows in FIFO order. A queued row never changes while it is queued (it
   * only leaves the status: claimed or cancelled; no transition leads back, workflow-states.ts), so
   * the rows are kept in memory once read: a read of the queue is one read of its ids (from one
   * snapshot) and the kept rows, and only a queue with an unseen id is read in full. The rows are
   * shared with that memory: callers must not mutate them.
   */
  async listQueued(projectId: string): Promise<WorkflowRow[]> {
    const ids = await this.q.queuedIds.pluck({ projectId });
    const kept: WorkflowRow[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const row = this.queuedRows.get(ids[i] as string);
      if (!row) return this.readQueue(projectId);
      kept[i] = row;
    }
    return kept;
  }

  /** The project's queue read in full, its rows kept (the oldest kept rows make room past `QUEUED_ROWS_KEPT`). */
  private async readQueue(projectId: string): Promise<WorkflowRow[]> {
    const rows = await this.q.queued.all({ projectId });
    for (const row of rows) this.keepQueued(row);
    return rows;
  }

  /** Keeps a queued row for `listQueued` (the oldest kept rows make room past `QUEUED_ROWS_KEPT`). */
  private keepQueued(row: WorkflowRow): void {
    if (this.queuedRows.size >= QUEUED_ROWS_KEPT) this.queuedRows.delete(this.queuedRows.keys().next().value!);
    this.queuedRows.set(row.id, row);
  }

  async latestFinished(projectId: string): Promise<WorkflowRow | undefined> {
    return this.q.latestFinished.get({ projectId });
  }

  /** Instructions of the project's earlier workflows, oldest first (the builder's memory). */
  async instructionsBefore(projectId: string, seq: number): Promise<string[]> {
    return (await this.q.instructionsBefore.all({ projectId, seq })).map((r) => r.instruction);
  }

  /**
   * The queued and active workflows of every project owned by `ownerId`, in one read (the web
   * console's projects list): active first within a project is not implied, order is by `seq`.
   */
  async listUnfinishedByOwner(
    ownerId: string,
  ): Promise<Pick<WorkflowRow, 'projectId' | 'kind' | 'status' | 'stepIndex' | 'stepTotal' | 'stepName'>[]> {
    return this.q.unfinishedByOwner.all({ ownerId });
  }

  /** See `WorkflowRepo.liveLeaseEnds` (docs/workflows.md "Leases"). */
  async liveLeaseEnds(runnerId: string, now: number, held: readonly string[]): Promise<LeaseEnd[]> {
    const rows = await this.q.liveLeaseEnds.all({ runnerId, now, held: JSON.stringify(held) });
    // Both are non-null: the statement keeps only rows with another runner and a lease ahead.
    return rows.map((r) => ({ runnerId: r.runnerId!, leaseEnd: r.leaseEnd! }));
  }

  /** See `WorkflowRepo.takeoverCandidates` (docs/workflows.md "Leases"). */
  async takeoverCandidates(
    runnerId: string,
    now: number,
    held: readonly string[],
    dead: readonly string[] = [],
  ): Promise<WorkflowRow[]> {
    return this.q.takeoverCandidates.all({
      runnerId,
      now,
      held: JSON.stringify(held),
      dead: JSON.stringify(dead),
    });
  }

  /** See `WorkflowRepo.slotCandidates` (docs/workflows.md "Fair shares"). */
  async slotCandidates(runnerId: string, builder: string): Promise<SlotCandidate[]> {
    return (await this.q.slotCandidates.all({ runnerId, builder })).map((r) => ({
      ...r.workflow,
      ownerId: r.ownerId,
      plan: r.plan,
    }));
  }

  /** Workflows holding a build slot (`running`, `cancelling`) per owner, server-wide. */
  async runningByOwner(): Promise<Map<string, number>> {
    const rows = await this.q.runningByOwner.all();
    return new Map(rows.map((r) => [r.ownerId, r.n]));
  }

  /** Queued workflows store-wide per recorded builder (`null`: recorded before builders were). */
  async countQueuedByBuilder(): Promise<Map<string | null, number>> {
    const { workflows } = this.d.t;
    const rows = await this.d.db
      .select({ builder: workflows.builder, n: count() })
      .from(workflows)
      .where(eq(workflows.status, 'queued'))
      .groupBy(workflows.builder);
    return new Map(rows.map((r) => [r.builder, r.n]));
  }

  /** Workflows of `ownerId` holding a build slot (`running`, `cancelling`): one count, on the statement's own snapshot. */
  async countRunningOf(ownerId: string): Promise<number> {
    return (await this.q.runningOf.get({ ownerId }))?.n ?? 0;
  }

  /** Queued (not yet started) workflows over all projects of `ownerId`. */
  async countQueuedByOwner(ownerId: string): Promise<number> {
    return ((await this.q.queuedByOwner.value({ ownerId })) as number | undefined) ?? 0;
  }

  /** Workflows in each status, store-wide: one `GROUP BY` over the `(status, seq)` index. */
  async countByStatus(): Promise<Record<WorkflowStatus, number>> {
    const { workflows } = this.d.t;
    const counts = Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, 0])) as Record<WorkflowStatus, number>;
    for (const row of await this.d.db
      .select({ status: workflows.status, n: count() })
      .from(workflows)
      .groupBy(workflows.status))
      counts[row.status] = row.n;
    return counts;
  }

  /**
   * Moves workflow `id` to a new status (and other fields) only if its status is `from` and, when
   * `owner` is given, its runner is `owner` (`null`: no runner).
   * @returns true when the row changed; false too when the change would make a second active
   *   workflow of the project (another node won the race).
   */
  async transition(id: string, from: WorkflowStatus, patch: Patch, owner?: string | null): Promise<boolean> {
    const { workflows } = this.d.t;
    const mayTrip =
      !ACTIVE_STATUSES.includes(from as (typeof ACTIVE_STATUSES)[number]) &&
      ACTIVE_STATUSES.includes(patch.status as (typeof ACTIVE_STATUSES)[number]);
    return this.changed(mayTrip, (d) =>
      d.db
        .update(workflows)
        .set(patch)
        .where(and(eq(workflows.id, id), eq(workflows.status, from), ownerIs(workflows, owner))),
    );
  }

  /**
   * The claim's compare-and-set: moves queued workflow `id` to `patch` (status `running`) only if it
   * is still queued, is the oldest queued workflow of its project, and the project has no active
   * workflow. A row another node is claiming is skipped; losing to another node on the one-active
   * index is false, not an error.
   * @returns true when this call claimed it.
   */
  async claimQueued(id: string, patch: Patch): Promise<boolean> {
    const { workflows } = this.d.t;
    return this.changed(true, (d) =>
      d.db
        .update(workflows)
        .set(patch)
        .where(
          sql`${workflows.id} = (select c.id from workflows c where c.id = ${id} and c.status = 'queued' ${d.skipLocked})
            and ${workflows.status} = 'queued'
            and not exists (select 1 from workflows a where a.project_id = ${workflows.projectId} and a.status in (${ACTIVE_SQL}))
            and ${workflows.seq} = (select min(q.seq) from workflows q where q.project_id = ${workflows.projectId} and q.status = 'queued')`,
        ),
    );
  }

  /**
   * The heartbeat's compare-and-set: moves the lease of active workflow `id` to `leaseExpiresAt`
   * (Unix ms on the database's clock) only while `runnerId` holds it.
   * @returns false when the runner has lost the workflow (taken over, finished, or gone).
   */
  async renewLease(id: string, runnerId: string, leaseExpiresAt: number): Promise<boolean> {
    return (await this.q.renewLease.run({ id, runnerId, leaseExpiresAt })) > 0;
  }

  /**
   * True while `runnerId` holds active workflow `id`; the row stays locked until the caller's
   * transaction ends (`Dialect.forUpdate`), so a takeover cannot slip between this check and the
   * write that depends on it. Call inside that write's transaction.
   */
  async isHeldBy(id: string, runnerId: string): Promise<boolean> {
    return (await this.q.heldBy.get({ id, runnerId })) !== undefined;
  }

  /**
   * Gives up the lease of a workflow waiting for input (its question stays stored), only if
   * `owner` (`null`: nobody) still holds it.
   */
  async releaseWaiting(id: string, owner: string | null): Promise<boolean> {
    const { workflows } = this.d.t;
    const result = await this.d.db
      .update(workflows)
      .set({ runnerId: null, leaseExpiresAt: null })
      .where(and(eq(workflows.id, id), eq(workflows.status, 'waiting_for_input'), ownerIs(workflows, owner)));
    return this.d.changes(result) > 0;
  }

  /** Updates fields that are not the status (the step) of an active workflow, only while `runnerId` holds it. */
  async updateHeld(id: string, runnerId: string, patch: Partial<Omit<WorkflowRow, 'status'>>): Promise<boolean> {
    const { workflows } = this.d.t;
    const result = await this.d.db
      .update(workflows)
      .set(patch)
      .where(and(eq(workflows.id, id), eq(workflows.runnerId, runnerId), inArray(workflows.status, ACTIVE_STATUSES)));
    return this.d.changes(result) > 0;
  }

  /**
   * Runs an UPDATE and says whether it changed a row. When it may trip the one-active index, it
   * runs under the dialect's savepoint, so that losing the race leaves the transaction usable.
   */
  private async changed(mayTrip: boolean, update: (d: Dialect) => PromiseLike<unknown>): Promise<boolean> {
    try {
      if (mayTrip) return await this.d.savepoint(async (d) => d.changes(await update(d)) > 0);
      return this.d.changes(await update(this.d)) > 0;
    } catch (error) {
      if (this.d.isUniqueViolation(error, ONE_ACTIVE_INDEX)) return false;
      throw error;
    }
  }
}

function ownerIs(workflows: Tables['workflows'], owner: string | null | undefined) {
  if (owner === undefined) return undefined;
  return owner === null ? isNull(workflows.runnerId) : eq(workflows.runnerId, owner);
}
