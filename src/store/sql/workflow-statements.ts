/** The fixed statements of the workflow repository (`workflow-repo.ts`), their parameters as placeholders of the same names. */
import { and, asc, count, desc, eq, gt, inArray, isNull, lte, min, ne, or, sql } from 'drizzle-orm';
import { ACTIVE_STATUSES as ACTIVE, TERMINAL_STATUSES as TERMINAL } from '../../core/workflow-states.js';
import type { WorkflowRow } from '../rows.js';
import type { Dialect } from './dialect.js';

/** The active statuses, as an array drizzle's `inArray` takes. */
export const ACTIVE_STATUSES = [...ACTIVE];
const TERMINAL_STATUSES = [...TERMINAL];
/** The active statuses as an SQL list, for `status in (…)` inside raw SQL. */
export const ACTIVE_SQL = sql.raw(ACTIVE_STATUSES.map((s) => `'${s}'`).join(', '));

/** The reads of one project's workflows. */
export function projectReads(d: Dialect) {
  const id = sql.placeholder('id');
  const projectId = sql.placeholder('projectId');
  const ownerId = sql.placeholder('ownerId');
  return {
    byId: d.statement((db, { workflows }) => db.select().from(workflows).where(eq(workflows.id, id))),
    active: d.statement((db, { workflows }) =>
      d.first(
        db
          .select()
          .from(workflows)
          .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, ACTIVE_STATUSES))),
      ),
    ),
    // Its id alone (`Statement.pluck`): whether there is one, with no row built.
    activeId: d.statement((db, { workflows }) =>
      d.first(
        db
          .select({ id: workflows.id })
          .from(workflows)
          .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, ACTIVE_STATUSES))),
      ),
    ),
    // The ids alone (`Statement.pluck`): a read of the queue whose rows are kept already builds no rows.
    queuedIds: d.statement((db, { workflows }) =>
      db
        .select({ id: workflows.id })
        .from(workflows)
        .where(and(eq(workflows.projectId, projectId), eq(workflows.status, 'queued')))
        .orderBy(asc(workflows.seq)),
    ),
    queued: d.statement((db, { workflows }) =>
      db
        .select()
        .from(workflows)
        .where(and(eq(workflows.projectId, projectId), eq(workflows.status, 'queued')))
        .orderBy(asc(workflows.seq)),
    ),
    // NULL last in descending order, as SQLite sorts by default: the same on PostgreSQL.
    latestFinished: d.statement((db, { workflows }) =>
      d.first(
        db
          .select()
          .from(workflows)
          .where(and(eq(workflows.projectId, projectId), inArray(workflows.status, TERMINAL_STATUSES)))
          .orderBy(sql`${workflows.finishedAt} desc nulls last`, desc(workflows.seq)),
      ),
    ),
    instructionsBefore: d.statement((db, { workflows }) =>
      db
        .select({ instruction: workflows.instruction })
        .from(workflows)
        .where(
          and(
            eq(workflows.projectId, projectId),
            sql`${workflows.seq} < ${sql.placeholder('seq')}`,
            eq(workflows.status, 'completed'),
          ),
        )
        .orderBy(asc(workflows.seq)),
    ),
    unfinishedByOwner: d.statement((db, { projects, workflows }) =>
      db
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
        .orderBy(asc(workflows.seq)),
    ),
  };
}

/** What the engine's scheduler reads and writes: the reaper's reads, slot candidates, counts per owner, leases. */
export function schedulerStatements(d: Dialect) {
  const ownerId = sql.placeholder('ownerId');
  const runnerId = sql.placeholder('runnerId');
  const { workflows } = d.t;
  const heldBy = and(
    eq(workflows.id, sql.placeholder('id')),
    eq(workflows.runnerId, runnerId),
    inArray(workflows.status, ACTIVE_STATUSES),
  );
  return {
    ...reaperReads(d),
    slotCandidates: d.statement((db, { projects, users }) =>
      db
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
        .orderBy(asc(workflows.seq)),
    ),
    runningByOwner: d.statement((db, { projects }) =>
      db
        .select({ ownerId: projects.ownerId, n: count() })
        .from(workflows)
        .innerJoin(projects, eq(projects.id, workflows.projectId))
        .where(inArray(workflows.status, ['running', 'cancelling']))
        .groupBy(projects.ownerId),
    ),
    runningOf: d.statement((db, { projects }) =>
      db
        .select({ n: count() })
        .from(workflows)
        .innerJoin(projects, eq(projects.id, workflows.projectId))
        .where(and(eq(projects.ownerId, ownerId), inArray(workflows.status, ['running', 'cancelling']))),
    ),
    // The owner's projects first (a plan bounds them), then each one's queued rows in the covering
    // `(project_id, status, seq)` index. SQLite keeps the order of a CROSS JOIN (PostgreSQL plans it
    // as the inner join it is); joined the other way, it read every queued workflow of the store,
    // then each one's project (docs/performance.md "Round three").
    queuedByOwner: d.statement((db, { projects }) =>
      db
        .select({ n: count() })
        .from(projects)
        .crossJoin(workflows)
        .where(
          and(eq(projects.ownerId, ownerId), eq(workflows.projectId, projects.id), eq(workflows.status, 'queued')),
        ),
    ),
    renewLease: d.statement(
      (db) =>
        db
          .update(workflows)
          .set({ leaseExpiresAt: sql<number>`${sql.placeholder('leaseExpiresAt')}` })
          .where(heldBy) as unknown as { execute(): Promise<unknown[]> },
    ),
    heldBy: d.statement((db) => d.forUpdate(db.select({ id: workflows.id }).from(workflows).where(heldBy))),
  };
}

/**
 * The reaper's two reads (docs/workflows.md "Leases"), each bounded by what it can act on, never by
 * the active workflows of the store. Parameters: `runnerId` (this engine's), `now` (ms on the
 * database's clock, as the engine reads it), `held` and `dead` (JSON arrays of text: the workflows
 * this process holds, the runners of other processes of this host known dead).
 * - `liveLeaseEnds`: per other runner, the earliest end of its live leases (one row per live runner);
 * - `takeoverCandidates`: the active workflows no live runner holds, oldest first: no runner or no
 *   lease, a lease over at `now`, this engine's runner (it holds only the `held` ones), or a dead runner.
 * Neither returns a workflow of `held`.
 */
function reaperReads(d: Dialect) {
  const { workflows } = d.t;
  const runnerId = sql.placeholder('runnerId');
  const now = sql.placeholder('now');
  const notHeld = sql`${workflows.id} not in (${d.jsonTexts(sql.placeholder('held'))})`;
  const active = inArray(workflows.status, ACTIVE_STATUSES);
  return {
    liveLeaseEnds: d.statement((db) =>
      db
        .select({ runnerId: workflows.runnerId, leaseEnd: min(workflows.leaseExpiresAt) })
        .from(workflows)
        .where(and(active, ne(workflows.runnerId, runnerId), gt(workflows.leaseExpiresAt, now), notHeld))
        .groupBy(workflows.runnerId),
    ),
    takeoverCandidates: d.statement((db) =>
      db
        .select()
        .from(workflows)
        .where(
          and(
            active,
            notHeld,
            or(
              isNull(workflows.runnerId),
              isNull(workflows.leaseExpiresAt),
              lte(workflows.leaseExpiresAt, now),
              eq(workflows.runnerId, runnerId),
              sql`${workflows.runnerId} in (${d.jsonTexts(sql.placeholder('dead'))})`,
            ),
          ),
        )
        .orderBy(asc(workflows.seq)),
    ),
  };
}

/** The columns of a new workflow's row, each a parameter named as the row's field. */
const WORKFLOW_COLUMNS = [
  'id',
  'projectId',
  'seq',
  'kind',
  'status',
  'instruction',
  'stepIndex',
  'stepTotal',
  'stepName',
  'runnerId',
  'leaseExpiresAt',
  'builder',
  'errorCode',
  'errorMessage',
  'createdAt',
  'startedAt',
  'finishedAt',
] as const satisfies readonly (keyof WorkflowRow)[];

/** `row` with every column of the insert, each absent one (`builder` of a new row) null: the values `insertStatement` binds. */
export function insertValues(row: WorkflowRow): WorkflowRow {
  // One object, no array of pairs: every send binds it.
  const values: Record<string, unknown> = {};
  for (let i = 0; i < WORKFLOW_COLUMNS.length; i++) {
    const name = WORKFLOW_COLUMNS[i]!;
    values[name] = row[name] ?? null;
  }
  return values as unknown as WorkflowRow;
}

/**
 * The insert of a new workflow (a send's), built once: every column a parameter, none left to its
 * default; bind it with `insertValues(row)`.
 */
export function insertStatement(d: Dialect) {
  const values = Object.fromEntries(WORKFLOW_COLUMNS.map((name) => [name, sql.placeholder(name)]));
  return d.statement(
    (db, { workflows }) => db.insert(workflows).values(values as never) as unknown as { execute(): Promise<unknown[]> },
  );
}
