/**
 * SQL for workflows (docs/workflows.md). State changes are compare-and-set on the old status; the
 * caller (the workflow journal) decides which changes are legal.
 */
import { and, asc, count, desc, eq, inArray, isNull, max, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { preparedOnce } from './prepared-once.js';
import type { WorkflowRepo, SlotCandidate } from '../repos.js';
import {
  ACTIVE_STATUSES as ACTIVE,
  TERMINAL_STATUSES as TERMINAL,
  WORKFLOW_STATUSES,
  type WorkflowStatus,
} from '../../core/workflow-states.js';
import { projects, users, workflows } from './schema.js';
import type { WorkflowRow } from '../rows.js';

const ACTIVE_STATUSES = [...ACTIVE];
const TERMINAL_STATUSES = [...TERMINAL];
/** Queued rows `listQueued` keeps in memory, at most (about 1 KiB each). */
const QUEUED_ROWS_KEPT = 4096;
const ACTIVE_SQL = sql.raw(ACTIVE_STATUSES.map((s) => `'${s}'`).join(', '));

/** Reads workflows and changes them by compare-and-set on the status. */
export class SqliteWorkflowRepo implements WorkflowRepo {
  /** The statements of the reads and of the heartbeat, prepared on first use (`prepared-once.ts`). */
  private readonly q = preparedOnce(() => prepareStatements(this.db));
  /** Queued rows by id, as read while queued (see `listQueued`). */
  private readonly queuedRows = new Map<string, WorkflowRow>();

  constructor(private readonly db: Db) {}

  async nextSeq(): Promise<number> {
    return (this.q().nextSeq.get()?.m ?? 0) + 1;
  }

  async insert(row: WorkflowRow): Promise<void> {
    // Every column bound, none left to its default: the prepared statement names them all.
    this.q().insert.run({
      id: row.id,
      projectId: row.projectId,
      seq: row.seq,
      kind: row.kind,
      status: row.status,
      instruction: row.instruction,
      stepIndex: row.stepIndex,
      stepTotal: row.stepTotal,
      stepName: row.stepName,
      runnerId: row.runnerId,
      leaseExpiresAt: row.leaseExpiresAt,
      builder: row.builder ?? null,
      errorCode: row.errorCode,
      errorMessage: row.errorMessage,
      createdAt: row.createdAt,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
    });
    // A queued row never changes while queued: kept as the queue's read would keep it (a rolled
    // back insert leaves an entry no queue names).
    if (row.status === 'queued') this.keepQueued({ ...row, builder: row.builder ?? null });
  }

  async findById(id: string): Promise<WorkflowRow | undefined> {
    return this.q().byId.get({ id });
  }

  async findActive(projectId: string): Promise<WorkflowRow | undefined> {
    return this.q().active.get({ projectId });
  }

  /**
   * The project's queued workflows in FIFO order. A queued row never changes while it is queued (it
   * only leaves the status: claimed or cancelled; no transition leads back, workflow-states.ts), so
   * the rows are kept in memory once read: a read of the queue is one read of its ids (from one
   * snapshot) and the kept rows, and only a queue with an unseen id is read in full. The rows are
   * shared with that memory: callers must not mutate them.
   */
  async listQueued(projectId: string): Promise<WorkflowRow[]> {
    const q = this.q();
    const kept: WorkflowRow[] = [];
    for (const id of q.queuedIds.all(projectId) as string[]) {
      const row = this.queuedRows.get(id);
      if (!row) return this.readQueue(projectId);
      kept.push(row);
    }
    return kept;
  }

  /** The project's queue read in full, its rows kept (the oldest kept rows make room past `QUEUED_ROWS_KEPT`). */
  private readQueue(projectId: string): WorkflowRow[] {
    const rows = this.q().queued.all({ projectId });
    for (const row of rows) this.keepQueued(row);
    return rows;
  }

  /** Keeps a queued row for `listQueued` (the oldest kept rows make room past `QUEUED_ROWS_KEPT`). */
  private keepQueued(row: WorkflowRow): void {
    if (this.queuedRows.size >= QUEUED_ROWS_KEPT) this.queuedRows.delete(this.queuedRows.keys().next().value!);
    this.queuedRows.set(row.id, row);
  }

  async latestFinished(projectId: string): Promise<WorkflowRow | undefined> {
    return this.q().latestFinished.get({ projectId });
  }

  /** Instructions of the project's earlier workflows, oldest first (the builder's memory). */
  async instructionsBefore(projectId: string, seq: number): Promise<string[]> {
    return this.q()
      .instructionsBefore.all({ projectId, seq })
      .map((r) => r.instruction);
  }

  /**
   * The queued and active workflows of every project owned by `ownerId`, in one read (the web
   * console's projects list): active first within a project is not implied, order is by `seq`.
   */
  async listUnfinishedByOwner(
    ownerId: string,
  ): Promise<Pick<WorkflowRow, 'projectId' | 'kind' | 'status' | 'stepIndex' | 'stepTotal' | 'stepName'>[]> {
    return this.q().unfinishedByOwner.all({ ownerId });
  }

  /** All active workflows of the store (for crash recovery and orphan checks). */
  async listActive(): Promise<WorkflowRow[]> {
    return this.q().allActive.all();
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
    return this.q()
      .slotCandidates.all({ runnerId, builder })
      .map((r) => ({ ...r.workflow, ownerId: r.ownerId, plan: r.plan }));
  }

  /** Workflows holding a build slot (`running`, `cancelling`) per owner, server-wide. */
  async runningByOwner(): Promise<Map<string, number>> {
    const rows = this.q().runningByOwner.all();
    return new Map(rows.map((r) => [r.ownerId, r.n]));
  }

  /** Queued workflows store-wide per recorded builder (`null`: recorded before builders were). */
  async countQueuedByBuilder(): Promise<Map<string | null, number>> {
    const rows = this.db
      .select({ builder: workflows.builder, n: count() })
      .from(workflows)
      .where(eq(workflows.status, 'queued'))
      .groupBy(workflows.builder)
      .all();
    return new Map(rows.map((r) => [r.builder, r.n]));
  }

  /** Workflows of `ownerId` holding a build slot (`running`, `cancelling`), server-wide. */
  async countRunningOf(ownerId: string): Promise<number> {
    return this.q().runningOf.get({ ownerId })?.n ?? 0;
  }

  /** Queued (not yet started) workflows over all projects of `ownerId`. */
  async countQueuedByOwner(ownerId: string): Promise<number> {
    return this.q().queuedByOwner.get({ ownerId })?.n ?? 0;
  }

  /** Workflows in each status, store-wide: one `GROUP BY` over the `(status, seq)` index. */
  async countByStatus(): Promise<Record<WorkflowStatus, number>> {
    const counts = Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, 0])) as Record<WorkflowStatus, number>;
    for (const row of this.db
      .select({ status: workflows.status, n: count() })
      .from(workflows)
      .groupBy(workflows.status)
      .all())
      counts[row.status] = row.n;
    return counts;
  }

  /**
   * Moves workflow `id` to a new status (and other fields) only if its status is `from` and, when
   * `owner` is given, its runner is `owner` (`null`: no runner).
   * @returns true when the row changed.
   */
  async transition(
    id: string,
    from: WorkflowStatus,
    patch: Partial<WorkflowRow> & { status: WorkflowStatus },
    owner?: string | null,
  ): Promise<boolean> {
    const result = this.db
      .update(workflows)
      .set(patch)
      .where(and(eq(workflows.id, id), eq(workflows.status, from), ownerIs(owner)))
      .run();
    return result.changes > 0;
  }

  /**
   * The claim's compare-and-set: moves queued workflow `id` to `patch` (status `running`) only if it
   * is still queued, is the oldest queued workflow of its project, and the project has no active
   * workflow. Never trips the one-active index.
   * @returns true when this call claimed it.
   */
  async claimQueued(id: string, patch: Partial<WorkflowRow> & { status: WorkflowStatus }): Promise<boolean> {
    const result = this.db
      .update(workflows)
      .set(patch)
      .where(
        sql`${workflows.id} = ${id} and ${workflows.status} = 'queued'
          and not exists (select 1 from workflows a where a.project_id = ${workflows.projectId} and a.status in (${ACTIVE_SQL}))
          and ${workflows.seq} = (select min(q.seq) from workflows q where q.project_id = ${workflows.projectId} and q.status = 'queued')`,
      )
      .run();
    return result.changes > 0;
  }

  /**
   * The heartbeat's compare-and-set: moves the lease of active workflow `id` to `leaseExpiresAt`
   * only while `runnerId` holds it.
   * @returns false when the runner has lost the workflow (taken over, finished, or gone).
   */
  async renewLease(id: string, runnerId: string, leaseExpiresAt: number): Promise<boolean> {
    return this.q().renewLease.run({ id, runnerId, leaseExpiresAt }).changes > 0;
  }

  /** True while `runnerId` holds active workflow `id` (call inside the write that depends on it). */
  async isHeldBy(id: string, runnerId: string): Promise<boolean> {
    return this.q().heldBy.get({ id, runnerId }) !== undefined;
  }

  /**
   * Gives up the lease of a workflow waiting for input (its question stays stored), only if
   * `owner` (`null`: nobody) still holds it.
   */
  async releaseWaiting(id: string, owner: string | null): Promise<boolean> {
    const result = this.db
      .update(workflows)
      .set({ runnerId: null, leaseExpiresAt: null })
      .where(and(eq(workflows.id, id), eq(workflows.status, 'waiting_for_input'), ownerIs(owner)))
      .run();
    return result.changes > 0;
  }

  /** Updates fields that are not the status (the step) of an active workflow, only while `runnerId` holds it. */
  async updateHeld(id: string, runnerId: string, patch: Partial<Omit<WorkflowRow, 'status'>>): Promise<boolean> {
    const result = this.db
      .update(workflows)
      .set(patch)
      .where(and(eq(workflows.id, id), eq(workflows.runnerId, runnerId), inArray(workflows.status, ACTIVE_STATUSES)))
      .run();
    return result.changes > 0;
  }
}

function ownerIs(owner: string | null | undefined) {
  if (owner === undefined) return undefined;
  return owner === null ? isNull(workflows.runnerId) : eq(workflows.runnerId, owner);
}

/** The repository's fixed statements, their parameters as placeholders of the same names. */
function prepareStatements(db: Db) {
  return { ...prepareProjectReads(db), ...prepareSchedulerStatements(db), insert: prepareInsert(db) };
}

/** The insert of a new workflow (a send's), every column a parameter named as the row's field. */
function prepareInsert(db: Db) {
  const p = (name: keyof WorkflowRow) => sql.placeholder(name);
  return db
    .insert(workflows)
    .values({
      id: p('id'),
      projectId: p('projectId'),
      seq: p('seq'),
      kind: p('kind'),
      status: p('status'),
      instruction: p('instruction'),
      stepIndex: p('stepIndex'),
      stepTotal: p('stepTotal'),
      stepName: p('stepName'),
      runnerId: p('runnerId'),
      leaseExpiresAt: p('leaseExpiresAt'),
      builder: p('builder'),
      errorCode: p('errorCode'),
      errorMessage: p('errorMessage'),
      createdAt: p('createdAt'),
      startedAt: p('startedAt'),
      finishedAt: p('finishedAt'),
    })
    .prepare();
}

/** The reads of one project's workflows (and the next sequence number). */
function prepareProjectReads(db: Db) {
  const id = sql.placeholder('id');
  const projectId = sql.placeholder('projectId');
  const ownerId = sql.placeholder('ownerId');
  return {
    nextSeq: db
      .select({ m: max(workflows.seq) })
      .from(workflows)
      .prepare(),
    byId: db.select().from(workflows).where(eq(workflows.id, id)).prepare(),
    active: db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, ACTIVE_STATUSES)))
      .prepare(),
    // The ids alone, as plain strings (better-sqlite3's `pluck`): no row objects to build.
    queuedIds: db.$client
      .prepare("select id from workflows where project_id = ? and status = 'queued' order by seq")
      .pluck(),
    queued: db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), eq(workflows.status, 'queued')))
      .orderBy(asc(workflows.seq))
      .prepare(),
    latestFinished: db
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, TERMINAL_STATUSES)))
      .orderBy(desc(workflows.finishedAt), desc(workflows.seq))
      .prepare(),
    instructionsBefore: db
      .select({ instruction: workflows.instruction })
      .from(workflows)
      .where(
        and(
          eq(workflows.projectId, projectId),
          sql`${workflows.seq} < ${sql.placeholder('seq')}`,
          eq(workflows.status, 'completed'),
        ),
      )
      .orderBy(asc(workflows.seq))
      .prepare(),
    unfinishedByOwner: db
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
      .orderBy(asc(workflows.seq))
      .prepare(),
  };
}

/** What the engine's scheduler reads and writes: every active workflow, slot candidates, counts per owner, leases. */
function prepareSchedulerStatements(db: Db) {
  const ownerId = sql.placeholder('ownerId');
  const runnerId = sql.placeholder('runnerId');
  const heldBy = and(
    eq(workflows.id, sql.placeholder('id')),
    eq(workflows.runnerId, runnerId),
    inArray(workflows.status, ACTIVE_STATUSES),
  );
  return {
    allActive: db.select().from(workflows).where(inArray(workflows.status, ACTIVE_STATUSES)).prepare(),
    slotCandidates: db
      .select({ workflow: workflows, ownerId: projects.ownerId, plan: users.plan })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .innerJoin(users, eq(users.id, projects.ownerId))
      .where(
        sql`(${workflows.builder} is null or ${workflows.builder} = ${sql.placeholder('builder')})
          and ((${workflows.status} = 'queued'
            and not exists (select 1 from workflows a where a.project_id = ${workflows.projectId}
                            and a.status in (${ACTIVE_SQL}))
            and ${workflows.seq} = (select min(q.seq) from workflows q where q.project_id = ${workflows.projectId} and q.status = 'queued'))
          or (${workflows.status} = 'waiting_for_input'
            and (${workflows.runnerId} is null or ${workflows.runnerId} = ${runnerId})
            and not exists (select 1 from questions q where q.workflow_id = ${workflows.id} and q.answer is null)))`,
      )
      .orderBy(asc(workflows.seq))
      .prepare(),
    runningByOwner: db
      .select({ ownerId: projects.ownerId, n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(inArray(workflows.status, ['running', 'cancelling']))
      .groupBy(projects.ownerId)
      .prepare(),
    runningOf: db
      .select({ n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(and(eq(projects.ownerId, ownerId), inArray(workflows.status, ['running', 'cancelling'])))
      .prepare(),
    queuedByOwner: db
      .select({ n: count() })
      .from(workflows)
      .innerJoin(projects, eq(projects.id, workflows.projectId))
      .where(and(eq(projects.ownerId, ownerId), eq(workflows.status, 'queued')))
      .prepare(),
    renewLease: db
      .update(workflows)
      .set({ leaseExpiresAt: sql<number>`${sql.placeholder('leaseExpiresAt')}` })
      .where(heldBy)
      .prepare(),
    heldBy: db.select({ id: workflows.id }).from(workflows).where(heldBy).prepare(),
  };
}
