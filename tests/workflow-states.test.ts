/**
 * The state machine is the single source of the workflow statuses (docs/workflows.md): the store's
 * column enum and one-active index, the tool output schemas and the diagram of docs/workflows.md all equal it,
 * and the journal applies exactly the transitions of the table and refuses every other pair.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '../src/logger.js';
import { workflowSchema } from '../src/services/resource-shapes.js';
import { cancelWorkflowTool } from '../src/mcp/tools/cancel-workflow.js';
import { openStore } from '../src/store/store.js';
import { workflows } from '../src/store/sqlite/schema.js';
import { sqliteOf } from './store-access.js';
import { WorkflowJournal } from '../src/workflows/workflow-journal.js';
import {
  ACTIVE_STATUSES,
  IllegalTransitionError,
  renderStateDiagram,
  TERMINAL_STATUSES,
  TRANSITIONS,
  WORKFLOW_EVENTS,
  WORKFLOW_STATUSES,
  type WorkflowStatus,
} from '../src/core/workflow-states.js';
import { ROOT } from './helpers.js';

// A compile-time check: the store's status type and the state machine's are the same set.
type StoredStatus = (typeof workflows.$inferSelect)['status'];
const sameType: [StoredStatus, WorkflowStatus] extends [WorkflowStatus, StoredStatus] ? true : false = true;

async function journalOnMemoryStore() {
  const store = await openStore({ file: ':memory:' });
  sqliteOf(store)
    .exec(`insert into users (id, name, plan, created_at) values ('u', 'u', 'free', '2026-01-01T00:00:00.000Z');
    insert into projects (id, owner_id, name, visibility, created_at, updated_at) values ('p', 'u', 'P', 'private', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');`);
  const repo = store.repos.workflows;
  const journal = new WorkflowJournal(store, systemClock, silentLogger());
  let seq = 0;
  const insert = async (status: WorkflowStatus) => {
    const id = `w${++seq}`;
    await repo.insert({
      id,
      projectId: 'p',
      seq,
      kind: 'build',
      status,
      instruction: 'x',
      stepIndex: 0,
      stepTotal: 0,
      stepName: null,
      runnerId: 'r',
      errorCode: null,
      errorMessage: null,
      createdAt: journal.now(),
      startedAt: null,
      finishedAt: null,
    } as never);
    return id;
  };
  const statusOf = async (id: string) => (await repo.findById(id))!.status;
  return { store, journal, insert, statusOf };
}

describe('the workflow state machine', () => {
  it('is the one list of statuses: store enum, index predicate, tool output schemas', async () => {
    expect(sameType).toBe(true);
    expect(workflows.status.enumValues).toEqual([...WORKFLOW_STATUSES]);
    expect(workflowSchema.shape.status.options).toEqual([...WORKFLOW_STATUSES]);
    expect((cancelWorkflowTool.descriptor.outputSchema as any).properties.status.enum).toEqual([...WORKFLOW_STATUSES]);
    // The index in a migrated database (not only the schema file) covers exactly the active set.
    const { store } = await journalOnMemoryStore();
    const sql = (
      sqliteOf(store)
        .prepare("select sql from sqlite_master where name = 'workflows_one_active_per_project'")
        .get() as { sql: string }
    ).sql;
    const listed = /status in \(([^)]*)\)/
      .exec(sql)![1]!
      .split(',')
      .map((s) => s.trim().replace(/'/g, ''));
    expect(listed.sort()).toEqual([...ACTIVE_STATUSES].sort());
    await store.close();
  });

  it('every status is active, terminal or queued; terminal statuses have no way out; all are reachable', async () => {
    for (const s of WORKFLOW_STATUSES) expect([...ACTIVE_STATUSES, ...TERMINAL_STATUSES, 'queued']).toContain(s);
    for (const t of TRANSITIONS) expect(TERMINAL_STATUSES as readonly string[]).not.toContain(t.from);
    const reached = new Set<WorkflowStatus>(['queued']);
    for (let grew = true; grew;) {
      grew = false;
      for (const t of TRANSITIONS) {
        if (reached.has(t.from) && !reached.has(t.to)) {
          reached.add(t.to);
          grew = true;
        }
      }
    }
    expect([...reached].sort()).toEqual([...WORKFLOW_STATUSES].sort());
  });

  it('no transition leads back to queued: a queued workflow never ran (the session lists its previews as none without a read)', () => {
    expect(TRANSITIONS.filter((t) => t.to === 'queued')).toEqual([]);
  });

  it('the journal applies every row of the table, and refuses every other (status, event) pair without writing', async () => {
    const { store, journal, insert, statusOf } = await journalOnMemoryStore();
    for (const from of WORKFLOW_STATUSES) {
      for (const event of WORKFLOW_EVENTS) {
        const row = TRANSITIONS.find((t) => t.from === from && t.event === event);
        const id = await insert(from);
        if (row) {
          expect(await journal.transition({ id, projectId: 'p' }, from, event), `${from} --${event}-->`).toBe(true);
          expect(await statusOf(id)).toBe(row.to);
        } else {
          await expect(
            journal.transition({ id, projectId: 'p' }, from, event),
            `${from} --${event}--> must be refused`,
          ).rejects.toThrow(IllegalTransitionError);
          expect(await statusOf(id)).toBe(from);
        }
        // A row is only one workflow active per project: finish it before the next case.
        sqliteOf(store).prepare("update workflows set status = 'failed' where id = ?").run(id);
      }
    }
    await store.close();
  });

  it('a transition is a compare-and-set: a stale `from` or another owner changes nothing', async () => {
    const { store, journal, insert, statusOf } = await journalOnMemoryStore();
    const id = await insert('running');
    expect(await journal.transition({ id, projectId: 'p' }, 'queued', 'claim')).toBe(false);
    expect(await journal.transition({ id, projectId: 'p' }, 'running', 'complete', { owner: 'someone-else' })).toBe(
      false,
    );
    expect(await statusOf(id)).toBe('running');
    expect(await journal.transition({ id, projectId: 'p' }, 'running', 'complete', { owner: 'r' })).toBe(true);
    expect(await statusOf(id)).toBe('completed');
    await store.close();
  });

  it('the diagram of docs/workflows.md is the one rendered from the table', async () => {
    const doc = readFileSync(join(ROOT, 'docs', 'workflows.md'), 'utf8');
    const block = /<!-- workflow-states:begin -->\n([\s\S]*?)\n<!-- workflow-states:end -->/.exec(doc)?.[1];
    expect(block, 'docs/workflows.md needs the generated state diagram between the workflow-states markers').toBe(
      renderStateDiagram(),
    );
  });
});
