/**
 * SQL for workflows (docs/workflows.md), on PostgreSQL (the twin of `sqlite/workflow-repo.ts`).
 * State changes are compare-and-set on the old status; the caller (the workflow journal) decides
 * which changes are legal. Where several nodes race:
 *
 * - `nextSeq` takes the next number of the `seq` identity's sequence (never `max + 1`: two sends
 *   to two projects through two nodes at once must not get the same number);
 * - `claimQueued` takes the row with `FOR UPDATE SKIP LOCKED` (a claim another node is making is
 *   skipped, not waited for);
 * - a change that would make a second active workflow of a project trips the unique index
 *   `workflows_one_active_per_project` (SQLSTATE 23505): that is "lost the race", false;
 * - `isHeldBy` locks the row (`FOR UPDATE`), so the reaper's takeover waits for the holder's write
 *   and a runner that lost its lease writes nothing after;
 * - lease ends (`leaseExpiresAt`, Unix ms) are written as given: the engine computes them on the
 *   database's clock (`Date.now() + store.clockOffsetMs()`).
 */
import { and, asc, count, desc, eq, inArray, isNull, is, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PgDb } from './db.js';
import type * as schema from './schema.js';
import type { WorkflowRepo, SlotCandidate } from '../repos.js';
import type { WorkflowRow } from '../rows.js';
import {
  ACTIVE_STATUSES as ACTIVE,
  TERMINAL_STATUSES as TERMINAL,
  WORKFLOW_STATUSES,
  type WorkflowStatus,
} from '../../core/workflow-states.js';
import { projects, users, workflows } from './schema.js';
import { isUniqueViolation } from './pg-errors.js';

const ACTIVE_STATUSES = [...ACTIVE];
const TERMINAL_STATUSES = [...TERMINAL];
const ACTIVE_SQL = sql.raw(ACTIVE_STATUSES.map((s) => `'${s}'`).join(', '));
const ONE_ACTIVE_INDEX = 'workflows_one_active_per_project';

/** Reads workflows and changes them by compare-and-set on the status (see the file comment). */
export class PgWorkflowRepo implements WorkflowRepo {
  /** @param db the pool's handle (auto-commit statements) or a transaction's. */
  constructor(private readonly db: PgDb) {}

  /** A fresh number from the `seq` identity's sequence: increasing, never repeated, across every node. */
  async nextSeq(): Promise<number> {
    const result = await this.db.execute<{ n: string }>(
      sql`select nextval(pg_get_serial_sequence('workflows', 'seq')) as n`,
    );
    return Number(result.rows[0]!.n);
  }

  async insert(row: WorkflowRow): Promise<void> {
    await this.db.insert(workflows).values(row);
  }

  async findById(id: string): Promise<WorkflowRow | undefined> {
    return (await this.db.select().from(workflows).where(eq(workflows.id, id)))[0];
  }

  async findActive(projectId: string): Promise<WorkflowRow | undefined> {
    const rows = await this.db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, ACTIVE_STATUSES)))
      .limit(1);
    return rows[0];
  }

  /** The project's queued workflows in FIFO order. */
  async listQueued(projectId: string): Promise<WorkflowRow[]> {
    return this.db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), eq(workflows.status, 'queued')))
      .orderBy(asc(workflows.seq));
  }

  async latestFinished(projectId: string): Promise<WorkflowRow | undefined> {
    // SQLite sorts NULL first in ascending order, so last in descending order: the same here.
    const rows = await this.db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, TERMINAL_STATUSES)))
      .orderBy(sql`${workflows.finishedAt} desc nulls last`, desc(workflows.seq))
      .limit(1);
    return rows[0];
  }

  /** Instructions of the project's earlier workflows, oldest first (the builder's memory). */
  async instructionsBefore(projectId: string, seq: number): Promise<string[]> {
    const rows = await this.db
      .select({ instruction: workflows.instruction })
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), sql`${workflows.seq} < ${seq}`, eq(workflows.status, 'completed')))
      .orderBy(asc(workflows.seq));
    return rows.map((r) => r.instruction);
  }

  /**
   * The queued and active workflows of every project owned by `ownerId`, in one read (the web
   * console's projects list): active first within a project is not implied, order is by `seq`.
   */
  async listUnfinishedByOwner(
    ownerId: string,
  ): Promise<Pick<WorkflowRow, 'projectId' | 'kind' | 'status' | 'stepIndex' | 'stepTotal' | 'stepName'>[]> {
    return this.db
      .select({
        projectId: workflows.projectId,
        kind: workflows.kind,
        status: workflows.status,
        stepIndex: workflows.stepIndex,
        stepTotal: workflows.stepTotal,
        stepName: workflows.stepName,
      })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(and(eq(projects.ownerId, ownerId), inArray(workflows.status, ['queued', ...ACTIVE_STATUSES])))
      .orderBy(asc(workflows.seq));
  }

  /** All active workflows of the store (for crash recovery and orphan checks), in `seq` order. */
  async listActive(): Promise<WorkflowRow[]> {
    return this.db
      .select()
      .from(workflows)
      .where(inArray(workflows.status, ACTIVE_STATUSES))
      .orderBy(asc(workflows.seq));
  }

  /**
   * Every workflow that could take a build slot now, oldest first, each with its owner and the
   * owner's plan (the engine's scheduler picks among them, docs/workflows.md "Fair shares"):
   * - the oldest queued workflow of each project that has no active workflow (per-project FIFO);
   * - each workflow waiting for input whose questions are all answered and that no runner holds,
   *   or that `runnerId` holds (its builder waits in that runner's memory).
   * A project has at most one of these (its active workflow, or the head of its queue).
   */
  async slotCandidates(runnerId: string, builder: string): Promise<SlotCandidate[]> {
    const rows = await this.db
      .select({ workflow: workflows, ownerId: projects.ownerId, plan: users.plan })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .innerJoin(users, eq(users.id, projects.ownerId))
      .where(
        sql`(${workflows.builder} is null or ${workflows.builder} = ${builder})
          and ((${workflows.status} = 'queued'
            and not exists (select 1 from workflows a where a.project_id = ${workflows.projectId}
                            and a.status in (${ACTIVE_SQL}))
            and ${workflows.seq} = (select min(q.seq) from workflows q where q.project_id = ${workflows.projectId} and q.status = 'queued'))
          or (${workflows.status} = 'waiting_for_input'
            and (${workflows.runnerId} is null or ${workflows.runnerId} = ${runnerId})
            and not exists (select 1 from questions q where q.workflow_id = ${workflows.id} and q.answer is null)))`,
      )
      .orderBy(asc(workflows.seq));
    return rows.map((r) => ({ ...r.workflow, ownerId: r.ownerId, plan: r.plan }));
  }

  /** Workflows holding a build slot (`running`, `cancelling`) per owner, server-wide. */
  async runningByOwner(): Promise<Map<string, number>> {
    const rows = await this.db
      .select({ ownerId: projects.ownerId, n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(inArray(workflows.status, ['running', 'cancelling']))
      .groupBy(projects.ownerId);
    return new Map(rows.map((r) => [r.ownerId, r.n]));
  }

  /** Workflows of `ownerId` holding a build slot (`running`, `cancelling`): one count, on the statement's own snapshot. */
  async countRunningOf(ownerId: string): Promise<number> {
    const rows = await this.db
      .select({ n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(and(eq(projects.ownerId, ownerId), inArray(workflows.status, ['running', 'cancelling'])));
    return rows[0]?.n ?? 0;
  }

  /** How many workflows of the store are in each status (every status present, 0 when none): one grouped read. */
  async countByStatus(): Promise<Record<WorkflowStatus, number>> {
    const counts = Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, 0])) as Record<WorkflowStatus, number>;
    for (const row of await this.db
      .select({ status: workflows.status, n: count() })
      .from(workflows)
      .groupBy(workflows.status))
      counts[row.status] = row.n;
    return counts;
  }

  /** Queued workflows store-wide per recorded builder (`null`: recorded before builders were). */
  async countQueuedByBuilder(): Promise<Map<string | null, number>> {
    const rows = await this.db
      .select({ builder: workflows.builder, n: count() })
      .from(workflows)
      .where(eq(workflows.status, 'queued'))
      .groupBy(workflows.builder);
    return new Map(rows.map((r) => [r.builder, r.n]));
  }

  /** Queued (not yet started) workflows over all projects of `ownerId`. */
  async countQueuedByOwner(ownerId: string): Promise<number> {
    const rows = await this.db
      .select({ n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(and(eq(projects.ownerId, ownerId), eq(workflows.status, 'queued')));
    return rows[0]?.n ?? 0;
  }

  /**
   * Moves workflow `id` to a new status (and other fields) only if its status is `from` and, when
   * `owner` is given, its runner is `owner` (`null`: no runner).
   * @returns true when the row changed; false too when the change would make a second active
   *   workflow of the project (another node won the race).
   */
  async transition(
    id: string,
    from: WorkflowStatus,
    patch: Partial<WorkflowRow> & { status: WorkflowStatus },
    owner?: string | null,
  ): Promise<boolean> {
    const mayTrip =
      !ACTIVE_STATUSES.includes(from as (typeof ACTIVE_STATUSES)[number]) &&
      ACTIVE_STATUSES.includes(patch.status as (typeof ACTIVE_STATUSES)[number]);
    return this.changed(mayTrip, (db) =>
      db
        .update(workflows)
        .set(patch)
        .where(and(eq(workflows.id, id), eq(workflows.status, from), ownerIs(owner))),
    );
  }

  /**
   * The claim's compare-and-set: moves queued workflow `id` to `patch` (status `running`) only if it
   * is still queued, is the oldest queued workflow of its project, and the project has no active
   * workflow. The row is taken with `FOR UPDATE SKIP LOCKED`: a row another node is claiming is
   * skipped. Losing to another node on the one-active index is false, not an error.
   * @returns true when this call claimed it.
   */
  async claimQueued(id: string, patch: Partial<WorkflowRow> & { status: WorkflowStatus }): Promise<boolean> {
    return this.changed(true, (db) =>
      db
        .update(workflows)
        .set(patch)
        .where(
          sql`${workflows.id} = (select c.id from workflows c where c.id = ${id} and c.status = 'queued' for update skip locked)
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
    const result = await this.db
      .update(workflows)
      .set({ leaseExpiresAt })
      .where(and(eq(workflows.id, id), eq(workflows.runnerId, runnerId), inArray(workflows.status, ACTIVE_STATUSES)));
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * True while `runnerId` holds active workflow `id`; the row stays locked (`FOR UPDATE`) until the
   * caller's transaction ends, so a takeover cannot slip between this check and the write that
   * depends on it. Call inside that write's transaction.
   */
  async isHeldBy(id: string, runnerId: string): Promise<boolean> {
    const rows = await this.db
      .select({ id: workflows.id })
      .from(workflows)
      .where(and(eq(workflows.id, id), eq(workflows.runnerId, runnerId), inArray(workflows.status, ACTIVE_STATUSES)))
      .for('update');
    return rows.length > 0;
  }

  /**
   * Gives up the lease of a workflow waiting for input (its question stays stored), only if
   * `owner` (`null`: nobody) still holds it.
   */
  async releaseWaiting(id: string, owner: string | null): Promise<boolean> {
    const result = await this.db
      .update(workflows)
      .set({ runnerId: null, leaseExpiresAt: null })
      .where(and(eq(workflows.id, id), eq(workflows.status, 'waiting_for_input'), ownerIs(owner)));
    return (result.rowCount ?? 0) > 0;
  }

  /** Updates fields that are not the status (the step) of an active workflow, only while `runnerId` holds it. */
  async updateHeld(id: string, runnerId: string, patch: Partial<Omit<WorkflowRow, 'status'>>): Promise<boolean> {
    const result = await this.db
      .update(workflows)
      .set(patch)
      .where(and(eq(workflows.id, id), eq(workflows.runnerId, runnerId), inArray(workflows.status, ACTIVE_STATUSES)));
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Runs an UPDATE and says whether it changed a row. When it may trip the one-active index inside
   * a transaction, it runs under a savepoint, so that losing the race leaves the transaction usable.
   */
  private async changed(
    mayTrip: boolean,
    update: (db: PgDb) => PromiseLike<{ rowCount: number | null }>,
  ): Promise<boolean> {
    try {
      if (mayTrip && is(this.db as object, PgTransaction)) {
        return await (this.db as NodePgDatabase<typeof schema>).transaction(
          async (savepoint) => ((await update(savepoint)).rowCount ?? 0) > 0,
        );
      }
      return ((await update(this.db)).rowCount ?? 0) > 0;
    } catch (error) {
      if (isUniqueViolation(error, ONE_ACTIVE_INDEX)) return false;
      throw error;
    }
  }
}

function ownerIs(owner: string | null | undefined) {
  if (owner === undefined) return undefined;
  return owner === null ? isNull(workflows.runnerId) : eq(workflows.runnerId, owner);
}
