/**
 * The store port's contract (docs/architecture.md "The store port"), run against every kind of
 * store: each repository method, rollback, change notices after commit only, two concurrent
 * transactions on one project, the per-project counters, and the guard against a transaction that
 * spans I/O. A second backend adds one row to STORES.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Repos } from '../../src/store/repos.js';
import type { ProjectRow, ReleaseRow, WorkflowRow } from '../../src/store/rows.js';
import { openStore, TransactionSpanError, type Store, type StoreConfig } from '../../src/store/store.js';
import type { PgStore } from '../../src/store/pg/open.js';
import { tempDir, waitFor } from '../helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

/** Opens a fresh, migrated store of one kind; `close` removes what it made. */
type StoreFactory = (options?: Partial<StoreConfig>) => Promise<{ store: Store; close(): Promise<void> }>;

const openSqliteForTest: StoreFactory = async (options = {}) => {
  const dir = tempDir('mbm-store-');
  const store = await openStore({ file: join(dir, 'store.db'), ...options });
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/** This file's PostgreSQL database, made on first use and emptied before each test. */
let pgDatabase: Promise<TestDatabase> | undefined;
afterAll(async () => (await pgDatabase)?.drop());

/** Empties every table of the file's database and starts the identities again (as a fresh database). */
async function emptyDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `select quote_ident(tablename) as name from pg_tables where schemaname = 'public'`,
    );
    await client.query(`truncate table ${tables.rows.map((t) => t.name).join(', ')} restart identity cascade`);
  } finally {
    await client.end();
  }
}

const openPostgresForTest: StoreFactory = async (options = {}) => {
  pgDatabase ??= createTestDatabase();
  const { url } = await pgDatabase;
  await emptyDatabase(url);
  const store = await openStore({ file: ':unused:', databaseUrl: url, ...options });
  return { store, close: () => store.close() };
};

const STORES: [string, StoreFactory][] = [
  ['sqlite', openSqliteForTest],
  ...(postgresAvailable() ? [['postgres', openPostgresForTest] as [string, StoreFactory]] : []),
];

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const T2 = '2026-01-01T02:00:00.000Z';

function workflow(
  id: string,
  projectId: string,
  seq: number,
  status: WorkflowRow['status'] = 'queued',
  extra: Partial<WorkflowRow> = {},
): WorkflowRow {
  return {
    id,
    projectId,
    seq,
    kind: 'build',
    status,
    instruction: `do ${id}`,
    stepIndex: 0,
    stepTotal: 0,
    stepName: null,
    runnerId: null,
    leaseExpiresAt: null,
    errorCode: null,
    errorMessage: null,
    createdAt: T0,
    startedAt: null,
    finishedAt: null,
    ...extra,
  };
}

function project(id: string, ownerId: string, createdAt = T0): ProjectRow {
  return {
    id,
    ownerId,
    name: id,
    description: null,
    visibility: 'private',
    createdAt,
    updatedAt: createdAt,
    messageSeq: 0,
    deploymentSeq: 0,
    workspaceVersion: 0,
  };
}

describe.each(STORES)('store contract: %s', (_kind, open) => {
  let store: Store;
  let close: () => Promise<void>;
  let r: Repos;

  beforeEach(async () => {
    ({ store, close } = await open());
    r = store.repos;
    await r.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    await r.users.insert({ id: 'u2', name: 'bob', plan: 'pro', createdAt: T0 });
    await r.projects.insert(project('p1', 'u1'));
    await r.projects.insert(project('p2', 'u1', T1));
    await r.projects.insert(project('q1', 'u2'));
  });
  afterEach(() => close());

  it('users: find by name and id, set a plan, list by name', async () => {
    expect(await r.users.findByName('alice')).toMatchObject({ id: 'u1', plan: 'free' });
    expect(await r.users.findById('u2')).toMatchObject({ name: 'bob' });
    expect(await r.users.findByName('nobody')).toBeUndefined();
    await r.users.setPlan('u1', 'pro');
    expect((await r.users.findById('u1'))!.plan).toBe('pro');
    expect((await r.users.list()).map((u) => u.name)).toEqual(['alice', 'bob']);
  });

  it('tokens: insert, find by hash (with the user) and id, revoke, list per user', async () => {
    await r.tokens.insert({
      id: 't1',
      userId: 'u1',
      tokenHash: 'h1',
      displayPrefix: 'svc_abcd',
      createdAt: T0,
      expiresAt: null,
      revokedAt: null,
      readOnly: false,
    });
    await r.tokens.insert({
      id: 't2',
      userId: 'u2',
      tokenHash: 'h2',
      displayPrefix: 'svc_efgh',
      createdAt: T0,
      expiresAt: T2,
      revokedAt: null,
      readOnly: true,
    });
    expect(await r.tokens.findByHash('h1')).toMatchObject({ token: { id: 't1' }, user: { name: 'alice' } });
    expect(await r.tokens.findByHash('nope')).toBeUndefined();
    // The read-only flag is kept as a boolean by both stores.
    expect((await r.tokens.findByHash('h2'))!.token.readOnly).toBe(true);
    expect((await r.tokens.findById('t1'))!.readOnly).toBe(false);
    await r.tokens.revoke('t1', T1);
    expect((await r.tokens.findById('t1'))!.revokedAt).toBe(T1);
    expect((await r.tokens.list()).map((t) => t.token.id)).toEqual(['t1', 't2']);
    expect((await r.tokens.list('u2')).map((t) => t.token.id)).toEqual(['t2']);
  });

  it('projects: find, list newest first, count, created since, touch, workspace versions', async () => {
    expect(await r.projects.findById('p1')).toMatchObject({ ownerId: 'u1', messageSeq: 0 });
    expect((await r.projects.listByOwner('u1')).map((p) => p.id)).toEqual(['p2', 'p1']);
    expect(await r.projects.countByOwner('u1')).toBe(2);
    expect(await r.projects.createdSince('u1', T0)).toEqual({ n: 1, oldest: T1 });
    await r.projects.touch('p1', T2);
    expect((await r.projects.findById('p1'))!.updatedAt).toBe(T2);
    expect(await r.projects.completeWorkspace('p1', T2)).toBe(1);
    expect(await r.projects.completeWorkspace('p1', T2)).toBe(2);
    expect((await r.projects.findById('p1'))!.workspaceVersion).toBe(2);
  });

  it("countQueuedByOwner counts the owner's queued workflows over all their projects, and nobody else's", async () => {
    expect(await r.workflows.countQueuedByOwner('u1')).toBe(0);
    let seq = 0;
    const add = (id: string, projectId: string, status: WorkflowRow['status'] = 'queued') =>
      r.workflows.insert(workflow(id, projectId, ++seq, status));
    await add('a1', 'p1', 'running');
    await add('a2', 'p1');
    await add('a3', 'p1');
    await add('b1', 'p2');
    await add('b2', 'p2', 'completed');
    await add('c1', 'q1');
    await add('c2', 'q1');
    expect(await r.workflows.countQueuedByOwner('u1')).toBe(3);
    expect(await r.workflows.countQueuedByOwner('u2')).toBe(2);
    expect(await r.workflows.countQueuedByOwner('nobody')).toBe(0);
    await r.workflows.transition('a2', 'queued', { status: 'cancelled' });
    expect(await r.workflows.countQueuedByOwner('u1')).toBe(2);
  });

  it('workflows: seq, FIFO queue, active, finished, history, owner views, claims, leases, holds', async () => {
    // Each number is taken just before its insert (SQLite: max + 1; PostgreSQL: the identity's sequence).
    const s1 = await r.workflows.nextSeq();
    expect(s1).toBe(1);
    await r.workflows.insert(workflow('a', 'p1', s1));
    const s2 = await r.workflows.nextSeq();
    await r.workflows.insert(workflow('b', 'p1', s2));
    const s3 = await r.workflows.nextSeq();
    await r.workflows.insert(workflow('c', 'q1', s3));
    expect(s1 < s2 && s2 < s3).toBe(true);
    expect(await r.workflows.nextSeq()).toBeGreaterThan(s3);
    expect((await r.workflows.listQueued('p1')).map((w) => w.id)).toEqual(['a', 'b']);
    expect(await r.workflows.countQueuedByOwner('u1')).toBe(2);
    expect((await r.workflows.slotCandidates('me', 'expo')).map((c) => [c.id, c.ownerId, c.plan])).toEqual([
      ['a', 'u1', 'free'],
      ['c', 'u2', 'pro'],
    ]);
    // Only the head of an idle project's queue can be claimed.
    expect(await r.workflows.claimQueued('b', { status: 'running', runnerId: 'me' })).toBe(false);
    expect(
      await r.workflows.claimQueued('a', { status: 'running', runnerId: 'me', leaseExpiresAt: 1000, startedAt: T1 }),
    ).toBe(true);
    expect(await r.workflows.claimQueued('a', { status: 'running', runnerId: 'me' })).toBe(false);
    expect((await r.workflows.findActive('p1'))!.id).toBe('a');
    expect((await r.workflows.takeoverCandidates('other', 999, [])).map((w) => w.id)).toEqual([]);
    expect((await r.workflows.takeoverCandidates('other', 1000, [])).map((w) => w.id)).toEqual(['a']);
    expect(await r.workflows.runningByOwner()).toEqual(new Map([['u1', 1]]));
    expect(await r.workflows.countByStatus()).toEqual({
      queued: 2,
      running: 1,
      waiting_for_input: 0,
      cancelling: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
    });
    expect(await r.workflows.listUnfinishedByOwner('u1')).toEqual([
      { projectId: 'p1', kind: 'build', status: 'running', stepIndex: 0, stepTotal: 0, stepName: null },
      { projectId: 'p1', kind: 'build', status: 'queued', stepIndex: 0, stepTotal: 0, stepName: null },
    ]);
    expect(await r.workflows.isHeldBy('a', 'me')).toBe(true);
    expect(await r.workflows.isHeldBy('a', 'other')).toBe(false);
    expect(await r.workflows.renewLease('a', 'me', 2000)).toBe(true);
    expect(await r.workflows.renewLease('a', 'other', 3000)).toBe(false);
    expect((await r.workflows.findById('a'))!.leaseExpiresAt).toBe(2000);
    expect(await r.workflows.updateHeld('a', 'me', { stepIndex: 1, stepTotal: 2, stepName: 'one' })).toBe(true);
    expect(await r.workflows.updateHeld('a', 'other', { stepIndex: 2 })).toBe(false);
    // Compare-and-set on the status and, when given, the runner.
    expect(await r.workflows.transition('a', 'queued', { status: 'cancelled' })).toBe(false);
    expect(await r.workflows.transition('a', 'running', { status: 'waiting_for_input' }, 'other')).toBe(false);
    expect(await r.workflows.transition('a', 'running', { status: 'waiting_for_input' }, 'me')).toBe(true);
    expect(await r.workflows.releaseWaiting('a', 'other')).toBe(false);
    expect(await r.workflows.releaseWaiting('a', 'me')).toBe(true);
    expect((await r.workflows.findById('a'))!).toMatchObject({ runnerId: null, leaseExpiresAt: null });
    expect(await r.workflows.transition('a', 'waiting_for_input', { status: 'running', runnerId: 'me' }, null)).toBe(
      true,
    );
    expect(await r.workflows.transition('a', 'running', { status: 'completed', finishedAt: T2 }, 'me')).toBe(true);
    expect((await r.workflows.latestFinished('p1'))!.id).toBe('a');
    expect(await r.workflows.instructionsBefore('p1', s2)).toEqual(['do a']);
    expect(await r.workflows.findActive('p1')).toBeUndefined();
  });

  it("the reaper's reads: live lease ends per other runner, and only the workflows no live runner holds", async () => {
    const now = 3000;
    const rows: [string, WorkflowRow['status'], string | null, number | null][] = [
      ['w1', 'running', 'other:1:a', 5000],
      ['w2', 'running', 'other:1:a', 4000],
      ['w3', 'running', 'far:2:b', 2000],
      ['w4', 'waiting_for_input', null, null],
      ['w5', 'cancelling', 'far:2:b', now],
      ['w6', 'running', 'me', 9000],
      ['w7', 'running', 'far:2:b', 8000],
      ['w8', 'failed', 'far:2:b', 1000],
      ['w9', 'running', 'other:1:a', null],
    ];
    for (const [id, status, runnerId, leaseExpiresAt] of rows) {
      await r.projects.insert(project(`r-${id}`, 'u1'));
      await r.workflows.insert(
        workflow(id, `r-${id}`, await r.workflows.nextSeq(), status, { runnerId, leaseExpiresAt }),
      );
    }
    // Queued rows are never read: no runner, no lease, yet not active.
    await r.workflows.insert(workflow('q', 'r-w1', await r.workflows.nextSeq()));
    const ends = async (runnerId: string, held: string[]) =>
      (await r.workflows.liveLeaseEnds(runnerId, now, held)).sort((x, y) => x.runnerId.localeCompare(y.runnerId));
    const ids = async (runnerId: string, held: string[], dead?: string[]) =>
      (await r.workflows.takeoverCandidates(runnerId, now, held, dead)).map((w) => w.id);
    expect(await ends('me', ['w6'])).toEqual([
      { runnerId: 'far:2:b', leaseEnd: 8000 },
      { runnerId: 'other:1:a', leaseEnd: 4000 },
    ]);
    // A held workflow counts for neither read; a runner's own leases are not another's.
    expect(await ends('me', ['w2'])).toEqual([
      { runnerId: 'far:2:b', leaseEnd: 8000 },
      { runnerId: 'other:1:a', leaseEnd: 5000 },
    ]);
    expect(await ends('other:1:a', [])).toEqual([
      { runnerId: 'far:2:b', leaseEnd: 8000 },
      { runnerId: 'me', leaseEnd: 9000 },
    ]);
    // Expired (a lease that ends at `now` is over), no runner, no lease; whole rows, oldest first.
    const candidates = await r.workflows.takeoverCandidates('me', now, ['w6']);
    expect(candidates.map((w) => w.id)).toEqual(['w3', 'w4', 'w5', 'w9']);
    expect(candidates[0]).toEqual(await r.workflows.findById('w3'));
    // This runner's own workflow that it does not hold; the live ones of a runner known dead.
    expect(await ids('me', [])).toEqual(['w3', 'w4', 'w5', 'w6', 'w9']);
    expect(await ids('me', ['w6'], ['other:1:a'])).toEqual(['w1', 'w2', 'w3', 'w4', 'w5', 'w9']);
    expect(await ids('someone', ['w3', 'w4', 'w9'])).toEqual(['w5']);
  });

  it('messages: append numbers per project from the project row, list pages after a seq', async () => {
    const m = (projectId: string, content: string) =>
      r.messages.append({
        id: `${projectId}-${content}`,
        projectId,
        workflowId: null,
        role: 'user',
        type: 'instruction',
        content,
        createdAt: T0,
      });
    expect((await m('p1', 'one')).seq).toBe(1);
    expect((await m('p1', 'two')).seq).toBe(2);
    expect((await m('p2', 'other')).seq).toBe(1);
    expect(await r.messages.lastSeq('p1')).toBe(2);
    expect(await r.messages.lastSeq('q1')).toBe(0);
    expect((await r.projects.findById('p1'))!.messageSeq).toBe(2);
    expect((await r.messages.list('p1', 1, 10)).map((x) => x.content)).toEqual(['two']);
    expect((await r.messages.list('p1', 0, 1)).map((x) => x.content)).toEqual(['one']);
  });

  it('questions: insert, pending, by key, latest answer of the project, answer once', async () => {
    await r.workflows.insert(workflow('a', 'p1', 1, 'waiting_for_input'));
    const q = {
      id: 'q',
      workflowId: 'a',
      projectId: 'p1',
      key: 'colour',
      prompt: 'Which?',
      options: null,
      pattern: null,
      kind: 'text' as const,
      format: null,
      maxLength: null,
      rules: null,
      askedAt: T0,
      answer: null,
      answeredAt: null,
    };
    await r.questions.insert(q);
    expect((await r.questions.findById('q'))!.prompt).toBe('Which?');
    expect((await r.questions.pendingOf('a'))!.id).toBe('q');
    expect((await r.questions.findByKey('a', 'colour'))!.id).toBe('q');
    expect(await r.questions.latestAnswer('p1', 'colour')).toBeUndefined();
    expect(await r.questions.answer('q', 'blue', T1)).toBe(true);
    expect(await r.questions.answer('q', 'red', T1)).toBe(false);
    expect(await r.questions.pendingOf('a')).toBeUndefined();
    expect(await r.questions.latestAnswer('p1', 'colour')).toBe('blue');
  });

  it('questions: file pages stored with a question and replaced', async () => {
    await r.workflows.insert(workflow('a', 'p1', 1, 'waiting_for_input'));
    await r.questions.insert({
      id: 'q',
      workflowId: 'a',
      projectId: 'p1',
      key: 'code_1',
      prompt: 'Code?',
      options: null,
      pattern: null,
      kind: 'code',
      format: null,
      maxLength: null,
      rules: null,
      askedAt: T0,
      answer: null,
      answeredAt: null,
    });
    expect(await r.questions.filePagesOf('q')).toBeUndefined();
    await r.questions.saveFilePages('q', '[[{"path":"App.tsx","content":"a"}]]');
    await r.questions.saveFilePages('q', '[[{"path":"App.tsx","content":"b"}]]');
    expect(await r.questions.filePagesOf('q')).toBe('[[{"path":"App.tsx","content":"b"}]]');
  });

  it('answer checks: insert, list the open ones, take once, settle once by the taker, delete, delete the old ones', async () => {
    await r.workflows.insert(workflow('a', 'p1', 1, 'waiting_for_input'));
    await r.workflows.insert(workflow('b', 'p2', 2, 'waiting_for_input'));
    for (const [id, wf] of [
      ['qa', 'a'],
      ['qb', 'b'],
    ] as const) {
      await r.questions.insert({
        id,
        workflowId: wf,
        projectId: wf === 'a' ? 'p1' : 'p2',
        key: 'code_1',
        prompt: 'Code?',
        options: null,
        pattern: null,
        kind: 'code',
        format: null,
        maxLength: null,
        rules: null,
        askedAt: T0,
        answer: null,
        answeredAt: null,
      });
    }
    const check = (id: string, questionId: string, workflowId: string, createdAt: string) => ({
      id,
      questionId,
      workflowId,
      answer: `answer ${id}`,
      checkedBy: null,
      verdict: null,
      createdAt,
    });
    await r.answerChecks.insert(check('c1', 'qa', 'a', T0));
    await r.answerChecks.insert(check('c2', 'qb', 'b', T1));
    await r.answerChecks.insert(check('c3', 'qa', 'a', T2));
    expect((await r.answerChecks.listOpen()).map((c) => c.id)).toEqual(['c1', 'c2', 'c3']);
    expect((await r.answerChecks.listOpen('a')).map((c) => c.id)).toEqual(['c1', 'c3']);
    expect(await r.answerChecks.settle('c1', 'r1', '{"ok":true}')).toBe(false);
    expect(await r.answerChecks.take('c1', 'r1')).toBe(true);
    expect(await r.answerChecks.take('c1', 'r2')).toBe(false);
    expect((await r.answerChecks.listOpen('a')).map((c) => c.id)).toEqual(['c3']);
    expect(await r.answerChecks.settle('c1', 'r2', '{"ok":false}')).toBe(false);
    expect(await r.answerChecks.settle('c1', 'r1', '{"ok":true,"content":"x"}')).toBe(true);
    expect(await r.answerChecks.settle('c1', 'r1', '{"ok":false}')).toBe(false);
    expect(await r.answerChecks.findById('c1')).toMatchObject({
      checkedBy: 'r1',
      verdict: '{"ok":true,"content":"x"}',
      answer: 'answer c1',
    });
    await r.answerChecks.delete('c1');
    expect(await r.answerChecks.findById('c1')).toBeUndefined();
    expect(await r.answerChecks.deleteBefore(T2)).toBe(1);
    expect((await r.answerChecks.listOpen()).map((c) => c.id)).toEqual(['c3']);
  });

  it('artifacts: insert, find, per workflow, latest per platform, bytes per owner, retention, deploy numbers from the project row', async () => {
    await r.workflows.insert(workflow('a', 'p1', 1, 'completed'));
    await r.workflows.insert(workflow('b', 'p1', 2, 'completed'));
    const art = (
      id: string,
      kind: 'preview' | 'deployment',
      platform: 'web' | 'ios',
      createdAt: string,
      workflowId = 'a',
      number: number | null = null,
    ) =>
      r.artifacts.insert({
        id,
        projectId: 'p1',
        workflowId,
        kind,
        platform,
        number,
        externalUrl: null,
        bytes: 10,
        createdAt,
        blobId: null,
      });
    await art('v1', 'preview', 'web', T0);
    await art('v2', 'preview', 'web', T1);
    await art('v3', 'preview', 'ios', T2);
    expect((await r.artifacts.findById('v1'))!.bytes).toBe(10);
    expect((await r.artifacts.listByWorkflow('a')).map((x) => x.id)).toEqual(['v1', 'v2', 'v3']);
    expect((await r.artifacts.latest('p1', 'preview', 'web'))!.id).toBe('v2');
    expect((await r.artifacts.latestPerPlatform('p1')).map((x) => x.id)).toEqual(['v3', 'v2']);
    expect(await r.artifacts.bytesUsedByOwner('u1')).toBe(30);
    expect((await r.artifacts.previewsBeyond('p1', 'web', 1)).map((x) => x.id)).toEqual(['v1']);
    await r.artifacts.delete(['v1']);
    expect(await r.artifacts.findById('v1')).toBeUndefined();
    // One number per deploy, shared by its platforms; the next deploy takes the next one.
    expect(await r.artifacts.deployNumber('p1', 'a')).toBe(1);
    await art('d1', 'deployment', 'web', T1, 'a', 1);
    // Newest first; equally new rows in the pairs' order (previews before deployments).
    expect((await r.artifacts.latestPerPlatform('p1')).map((x) => x.id)).toEqual(['v3', 'v2', 'd1']);
    expect(await r.artifacts.deployNumber('p1', 'a')).toBe(1);
    expect(await r.artifacts.deployNumber('p1', 'b')).toBe(2);
    expect((await r.projects.findById('p1'))!.deploymentSeq).toBe(2);
    // Exports (checkpoints) by kind, newest first; never among the latest per platform.
    await r.artifacts.insert({ ...(await r.artifacts.findById('v2'))!, id: 'e1', kind: 'export', createdAt: T1 });
    await r.artifacts.insert({ ...(await r.artifacts.findById('v2'))!, id: 'e2', kind: 'export', createdAt: T2 });
    expect((await r.artifacts.listByKind('p1', 'export', 10)).map((x) => x.id)).toEqual(['e2', 'e1']);
    expect((await r.artifacts.listByKind('p1', 'export', 1)).map((x) => x.id)).toEqual(['e2']);
    expect((await r.artifacts.listByKind('p1', 'deployment', 10)).map((x) => x.id)).toEqual(['d1']);
    expect((await r.artifacts.latestPerPlatform('p1')).map((x) => x.id)).toEqual(['v3', 'v2', 'd1']);
  });

  it('project environment: put creates and replaces, list by name, remove once', async () => {
    await r.projectEnv.put({ projectId: 'p1', name: 'B_KEY', value: 'v1:sealed', secret: true, updatedAt: T0 });
    await r.projectEnv.put({ projectId: 'p1', name: 'A_URL', value: 'https://a', secret: false, updatedAt: T0 });
    await r.projectEnv.put({ projectId: 'p2', name: 'A_URL', value: 'other', secret: false, updatedAt: T0 });
    await r.projectEnv.put({ projectId: 'p1', name: 'A_URL', value: 'https://b', secret: false, updatedAt: T1 });
    expect(await r.projectEnv.list('p1')).toEqual([
      { projectId: 'p1', name: 'A_URL', value: 'https://b', secret: false, updatedAt: T1 },
      { projectId: 'p1', name: 'B_KEY', value: 'v1:sealed', secret: true, updatedAt: T0 },
    ]);
    expect(await r.projectEnv.remove('p1', 'A_URL')).toBe(true);
    expect(await r.projectEnv.remove('p1', 'A_URL')).toBe(false);
    expect((await r.projectEnv.list('p1')).map((v) => v.name)).toEqual(['B_KEY']);
    expect((await r.projectEnv.list('p2')).map((v) => v.value)).toEqual(['other']);
  });

  it('update channels: a token per project on first use, stable, unique, resolved back; adopt keeps the first', async () => {
    const token = await r.updateChannels.tokenOf('p1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await store.transaction((tx) => tx.updateChannels.tokenOf('p1'))).toBe(token);
    expect(await r.updateChannels.tokenOf('p2')).not.toBe(token);
    expect(await r.updateChannels.projectOf(token)).toBe('p1');
    expect(await r.updateChannels.projectOf('x'.repeat(32))).toBeNull();
    expect(await r.updateChannels.adopt('p1', 'y'.repeat(32), T0)).toBe(false);
    expect(await r.updateChannels.adopt('q1', 'y'.repeat(32), T0)).toBe(true);
    expect(await r.updateChannels.tokenOf('q1')).toBe('y'.repeat(32));
  });

  it('releases: recorded at send, fixed at publish, listed newest first per project and channel', async () => {
    const release = (workflowId: string, channel: string, extra: Partial<ReleaseRow> = {}): ReleaseRow => ({
      workflowId,
      projectId: 'p1',
      channel,
      rolloutPercent: 100,
      rollbackOf: null,
      number: null,
      previousNumber: null,
      platforms: '[]',
      sdks: '[]',
      changes: null,
      source: null,
      createdAt: T0,
      ...extra,
    });
    for (const [id, seq] of [
      ['ra', 1],
      ['rb', 2],
      ['rc', 3],
    ] as const)
      await r.workflows.insert(workflow(id, 'p1', seq, 'completed'));
    await r.releases.insert(release('ra', 'production'));
    await r.releases.insert(release('rb', 'preview', { rolloutPercent: 40 }));
    await r.releases.insert(release('rc', 'production', { rollbackOf: 1 }));
    // Unpublished releases are in no list.
    expect(await r.releases.recent('p1', 20)).toEqual([]);
    const source = Buffer.from([0, 1, 2, 255]);
    await store.transaction((tx) =>
      tx.releases.update('ra', { number: 1, platforms: '["ios"]', sdks: '[58]', source, createdAt: T1 }),
    );
    await r.releases.update('rb', { number: 2, previousNumber: null, changes: '[]' });
    await r.releases.update('rc', { number: 3, previousNumber: 1, rolloutPercent: 100 });
    expect((await r.releases.recent('p1', 20)).map((x) => x.number)).toEqual([3, 2, 1]);
    expect((await r.releases.recent('p1', 2)).map((x) => x.number)).toEqual([3, 2]);
    expect((await r.releases.onChannel('p1', 'production', 5)).map((x) => [x.number, x.rollbackOf])).toEqual([
      [3, 1],
      [1, null],
    ]);
    expect(await r.releases.numbers('p1')).toEqual([1, 2, 3]);
    expect(await r.releases.numbers('p2')).toEqual([]);
    const first = (await r.releases.byNumber('p1', 1))!;
    expect(first).toMatchObject({ workflowId: 'ra', platforms: '["ios"]', sdks: '[58]', createdAt: T1 });
    expect(Buffer.from(first.source!).equals(source)).toBe(true);
    expect((await r.releases.byWorkflow('rb'))!.rolloutPercent).toBe(40);
    expect('source' in (await r.releases.recent('p1', 1))[0]!).toBe(false);
    expect(await r.releases.byNumber('p1', 9)).toBeUndefined();
  });

  it('process groups: insert, list by project and host, remove', async () => {
    await r.workflows.insert(workflow('a', 'p1', 1, 'running', { runnerId: 'me' }));
    await r.processGroups.insert({
      host: 'h1',
      pgid: 42,
      leaderStart: null,
      workflowId: 'a',
      projectId: 'p1',
      runnerId: 'me',
      createdAt: T0,
    });
    expect((await r.processGroups.listByProject('p1')).map((g) => g.pgid)).toEqual([42]);
    expect((await r.processGroups.listByHost('h1')).map((g) => g.pgid)).toEqual([42]);
    expect(await r.processGroups.listByHost('h2')).toEqual([]);
    await r.processGroups.remove('h1', 42);
    expect(await r.processGroups.listByProject('p1')).toEqual([]);
  });

  it('OAuth: clients, authorization requests, grants, single-use codes and tokens', async () => {
    const o = r.oauth;
    await o.saveClient({ clientId: 'c', kind: 'registered', metadata: '{}', createdAt: T0, expiresAt: null });
    expect((await o.findClient('c'))!.kind).toBe('registered');
    await o.insertRequest({
      id: 'rq',
      clientId: 'c',
      redirectUri: 'http://x/cb',
      codeChallenge: 'ch',
      state: 's',
      resource: 'http://r/mcp',
      scope: '',
      csrfHash: 'x',
      createdAt: T0,
      expiresAt: T2,
      decidedAt: null,
    });
    await o.setRequestCsrf('rq', 'y');
    expect((await o.findRequest('rq'))!.csrfHash).toBe('y');
    expect(await o.decideRequest('rq', T1)).toBe(true);
    expect(await o.decideRequest('rq', T1)).toBe(false);
    await o.deleteExpiredRequests('2027-01-01T00:00:00.000Z');
    expect(await o.findRequest('rq')).toBeUndefined();
    await o.insertGrant({
      id: 'g',
      userId: 'u1',
      clientId: 'c',
      clientName: 'C',
      resource: 'http://r/mcp',
      scope: '',
      createdAt: T0,
      lastUsedAt: null,
      revokedAt: null,
    });
    await o.touchGrant('g', T1);
    expect((await o.findGrant('g'))!.lastUsedAt).toBe(T1);
    await o.insertCode({
      codeHash: 'ch1',
      grantId: 'g',
      clientId: 'c',
      redirectUri: 'http://x/cb',
      codeChallenge: 'ch',
      resource: 'http://r/mcp',
      createdAt: T0,
      expiresAt: T2,
      usedAt: null,
    });
    expect(await o.hasOpenCode('g', T1)).toBe(true);
    expect((await o.findCode('ch1'))!.grantId).toBe('g');
    expect(await o.useCode('ch1', T1)).toBe(true);
    expect(await o.useCode('ch1', T1)).toBe(false);
    const token = (id: string, kind: 'access' | 'refresh', expiresAt: string) => ({
      id,
      tokenHash: `h-${id}`,
      kind,
      grantId: 'g',
      resource: 'http://r/mcp',
      createdAt: T0,
      expiresAt,
      usedAt: null,
      revokedAt: null,
    });
    await o.insertToken(token('at', 'access', T1));
    await o.insertToken(token('rt', 'refresh', T2));
    expect(await o.findToken('h-at')).toMatchObject({
      token: { id: 'at' },
      grant: { id: 'g' },
      user: { name: 'alice' },
    });
    expect(await o.lastRefreshExpiry('g')).toBe(T2);
    expect(await o.useToken('rt', T1)).toBe(true);
    expect(await o.useToken('rt', T1)).toBe(false);
    await o.revokeToken('at', T1);
    expect((await o.findToken('h-at'))!.token.revokedAt).toBe(T1);
    expect((await o.listGrants('u1')).map((g) => [g.grant.id, g.user.name])).toEqual([['g', 'alice']]);
    await o.revokeGrant('g', T2);
    expect((await o.findGrant('g'))!.revokedAt).toBe(T2);
    await o.deleteExpired('2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z');
    expect(await o.findCode('ch1')).toBeUndefined();
    expect(await o.findToken('h-at')).toBeUndefined();
  });

  it('login codes and console sessions', async () => {
    await r.loginCodes.insert({ codeHash: 'lc', userId: 'u1', createdAt: T0, expiresAt: T2, usedAt: null });
    expect(await r.loginCodes.consume('lc', T1)).toMatchObject({ name: 'alice' });
    expect(await r.loginCodes.consume('lc', T1)).toBeUndefined();
    await r.webSessions.insert({
      id: 's1',
      sessionHash: 'sh1',
      userId: 'u1',
      tokenId: null,
      createdAt: T0,
      expiresAt: T2,
    });
    await r.webSessions.insert({
      id: 's2',
      sessionHash: 'sh2',
      userId: 'u2',
      tokenId: null,
      createdAt: T0,
      expiresAt: T1,
    });
    expect(await r.webSessions.findByHash('sh1')).toMatchObject({
      session: { id: 's1' },
      user: { name: 'alice' },
      token: null,
    });
    expect((await r.webSessions.listLive('2026-01-01T00:30:00.000Z')).map((w) => w.session.id).sort()).toEqual([
      's1',
      's2',
    ]);
    expect((await r.webSessions.listLive('2026-01-01T00:30:00.000Z', 'u2')).map((w) => w.userName)).toEqual(['bob']);
    await r.webSessions.deleteExpired('2026-01-01T01:30:00.000Z');
    expect(await r.webSessions.findByHash('sh2')).toBeUndefined();
    await r.webSessions.deleteByHash('sh1');
    expect(await r.webSessions.findByHash('sh1')).toBeUndefined();
    await r.webSessions.insert({
      id: 's3',
      sessionHash: 'sh3',
      userId: 'u1',
      tokenId: null,
      createdAt: T0,
      expiresAt: T2,
    });
    expect(await r.webSessions.deleteById('s3')).toBe(true);
    expect(await r.webSessions.deleteById('s3')).toBe(false);
  });

  it('a transaction commits what it wrote and returns what its function returned', async () => {
    const seq = await store.transaction(async (tx) => {
      await tx.lock('projects', 'p1');
      await tx.workflows.insert(workflow('a', 'p1', 1));
      return (
        await tx.messages.append({
          id: 'm',
          projectId: 'p1',
          workflowId: 'a',
          role: 'user',
          type: 'instruction',
          content: 'x',
          createdAt: T0,
        })
      ).seq;
    });
    expect(seq).toBe(1);
    expect((await r.workflows.findById('a'))!.status).toBe('queued');
  });

  it('a transaction that throws writes nothing, and the error reaches the caller', async () => {
    const failure = new Error('refused');
    await expect(
      store.transaction(async (tx) => {
        await tx.workflows.insert(workflow('a', 'p1', 1));
        await tx.messages.append({
          id: 'm',
          projectId: 'p1',
          workflowId: 'a',
          role: 'user',
          type: 'instruction',
          content: 'x',
          createdAt: T0,
        });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await r.workflows.findById('a')).toBeUndefined();
    expect(await r.messages.lastSeq('p1')).toBe(0);
    expect((await r.projects.findById('p1'))!.messageSeq).toBe(0);
  });

  it('events reach listeners after COMMIT, never on rollback, and not while the transaction is open', async () => {
    const seen: string[] = [];
    const stop = store.events.subscribe('project', (id) => seen.push(id));
    await store.transaction(async (tx) => {
      tx.publish({ kind: 'project', id: 'p1' });
      tx.publish({ kind: 'queued', id: 'p1' });
      await tx.projects.touch('p1', T1);
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['p1']);
    await expect(
      store.transaction(async (tx) => {
        tx.publish({ kind: 'project', id: 'p2' });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(seen).toEqual(['p1']);
    stop();
    await store.transaction(async (tx) => tx.publish({ kind: 'project', id: 'p1' }));
    expect(seen).toEqual(['p1']);
  });

  it('a read outside a transaction never sees its uncommitted rows (SQLite: it waits for the commit)', async () => {
    let readDuring: Promise<WorkflowRow | undefined> | undefined;
    await store.transaction(async (tx) => {
      await tx.workflows.insert(workflow('a', 'p1', 1));
      readDuring = r.workflows.findById('a');
      await tx.workflows.transition('a', 'queued', { status: 'running' });
    });
    // SQLite has one connection: the read waits for the commit. PostgreSQL reads on another
    // connection: before the commit (nothing) or after it (running), never the queued row between.
    if (store.dialect === 'sqlite') expect((await readDuring!)!.status).toBe('running');
    else expect([undefined, 'running']).toContain((await readDuring!)?.status);
    let readRolledBack: Promise<WorkflowRow | undefined> | undefined;
    await expect(
      store.transaction(async (tx) => {
        await tx.workflows.insert(workflow('b', 'p2', 2));
        readRolledBack = r.workflows.findById('b');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await readRolledBack!).toBeUndefined();
  });

  it('two concurrent transactions on one project run one after the other and lose no update (SQLite: in call order)', async () => {
    const order: string[] = [];
    const send = (name: string) =>
      store.transaction(async (tx) => {
        await tx.lock('projects', 'p1');
        order.push(`${name} begins`);
        const seq = await tx.workflows.nextSeq();
        await tx.workflows.insert(workflow(name, 'p1', seq));
        const message = await tx.messages.append({
          id: `m-${name}`,
          projectId: 'p1',
          workflowId: name,
          role: 'user',
          type: 'instruction',
          content: name,
          createdAt: T0,
        });
        const position = (await tx.workflows.listQueued('p1')).findIndex((w) => w.id === name) + 1;
        order.push(`${name} ends`);
        return { seq, message: message.seq, position };
      });
    const names = ['a', 'b', 'c', 'd'];
    const results = await Promise.all(names.map(send));
    // Holding the project's lock, each ran whole before the next began: in call order on SQLite
    // (one FIFO mutex), in the order the lock was granted on PostgreSQL (the seqs say which).
    const granted =
      store.dialect === 'sqlite'
        ? names
        : [...names].sort((x, y) => results[names.indexOf(x)]!.seq - results[names.indexOf(y)]!.seq);
    expect(order).toEqual(granted.flatMap((n) => [`${n} begins`, `${n} ends`]));
    expect(granted.map((n) => results[names.indexOf(n)])).toEqual([
      { seq: 1, message: 1, position: 1 },
      { seq: 2, message: 2, position: 2 },
      { seq: 3, message: 3, position: 3 },
      { seq: 4, message: 4, position: 4 },
    ]);
    expect((await r.projects.findById('p1'))!.messageSeq).toBe(4);
  });

  it('a transaction that awaits I/O (a macrotask) is rolled back and rejected, and the error is thrown for the test run to see', async () => {
    await close();
    const reported: TransactionSpanError[] = [];
    ({ store, close } = await open({ strictTransactions: true, onTransactionSpan: (error) => reported.push(error) }));
    await store.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    // The guard's error is thrown from the event loop's callback on purpose: caught here so that
    // this test, which provokes it, does not fail the run.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      await expect(
        store.transaction(async (tx) => {
          await tx.users.setPlan('u1', 'pro');
          await new Promise((resolve) => setTimeout(resolve, 5));
          await tx.users.setPlan('u1', 'team');
        }),
      ).rejects.toBeInstanceOf(TransactionSpanError);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(reported).toHaveLength(1);
    expect(uncaught).toEqual([reported[0]]);
    expect((await store.repos.users.findById('u1'))!.plan).toBe('free');
    // The store works on: the next transaction is not blocked.
    await store.transaction(async (tx) => tx.users.setPlan('u1', 'pro'));
    expect((await store.repos.users.findById('u1'))!.plan).toBe('pro');
  });

  it("a transaction's repositories refuse calls once it has ended, while the next transaction runs on its own", async () => {
    const first = await store.transaction(async (tx) => {
      await tx.users.setPlan('u1', 'pro');
      return tx;
    });
    await expect(first.users.setPlan('u1', 'team')).rejects.toThrow(/has ended/);
    await store.transaction(async (tx) => {
      // The ended transaction's repositories stay refused while another is open, and never join it.
      await expect(first.users.setPlan('u1', 'team')).rejects.toThrow(/has ended/);
      expect(tx.users).not.toBe(first.users);
      expect(tx.users).toBe(tx.users);
      await tx.users.setPlan('u1', 'team');
    });
    expect((await store.repos.users.findById('u1'))!.plan).toBe('team');
  });

  it('the guard never fires for a transaction that awaits only its repositories, however many', async () => {
    await close();
    const reported: TransactionSpanError[] = [];
    ({ store, close } = await open({ strictTransactions: true, onTransactionSpan: (error) => reported.push(error) }));
    await store.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    // Eight transactions at once, each on a project of its own: fewer than the pool's connections and
    // no shared row lock, so none waits (waiting for a connection is bounded on PostgreSQL). What
    // varies is the number of awaits inside each transaction.
    const projects = Array.from({ length: 8 }, (_, i) => `p${i + 1}`);
    for (const id of projects) await store.repos.projects.insert(project(id, 'u1'));
    await Promise.all(
      projects.map((projectId, i) =>
        store.transaction(async (tx) => {
          for (let j = 0; j < 50; j++)
            await tx.messages.append({
              id: `m${i}-${j}`,
              projectId,
              workflowId: null,
              role: 'system',
              type: 'status',
              content: 'x',
              createdAt: T0,
            });
        }),
      ),
    );
    expect(reported).toEqual([]);
    for (const id of projects) expect(await store.repos.messages.lastSeq(id)).toBe(50);
  });
});

describe('openStore', () => {
  it('refuses a database URL that is not postgres:// or postgresql://, without echoing it', async () => {
    await expect(openStore({ file: ':memory:', databaseUrl: 'mysql://user:secret@host/db' })).rejects.toThrow(
      /postgres:\/\/ or postgresql:\/\/ \(got mysql:\/\/…\)/,
    );
    await expect(openStore({ file: ':memory:', databaseUrl: 'mysql://user:secret@host/db' })).rejects.not.toThrow(
      /secret/,
    );
  });
});

/** Nodes on one database: two PgStores with pools of their own, as two processes would have. */
describe.skipIf(!postgresAvailable())('store contract: postgres across nodes', () => {
  let a: PgStore;
  let b: PgStore;
  let admin: pg.Client;

  const openNode = async (name: string, options: Partial<StoreConfig> = {}) => {
    pgDatabase ??= createTestDatabase();
    return (await openStore({
      file: ':unused:',
      databaseUrl: (await pgDatabase).url,
      applicationName: name,
      ...options,
    })) as PgStore;
  };

  beforeEach(async () => {
    pgDatabase ??= createTestDatabase();
    const { url } = await pgDatabase;
    await emptyDatabase(url);
    a = await openNode('node-a');
    b = await openNode('node-b');
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await a.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    await a.repos.projects.insert(project('p1', 'u1'));
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await admin.end();
  });

  /** True once a connection of `applicationName` waits for a row lock. */
  const waitsForLock = async (applicationName: string) =>
    (
      await admin.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`, [
        applicationName,
      ])
    ).rowCount! > 0;

  it('transactions that lock one project take turns: the second sees what the first wrote', async () => {
    // Node A holds the lock while it waits for the test (a span it is told to ignore).
    const holder = await openNode('node-holder', { strictTransactions: false, onTransactionSpan: () => {} });
    try {
      let locked!: () => void;
      const hasLock = new Promise<void>((resolve) => (locked = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const first = holder.transaction(async (tx) => {
        await tx.lock('projects', 'p1');
        locked();
        await released;
        return (
          await tx.messages.append({
            id: 'm1',
            projectId: 'p1',
            workflowId: null,
            role: 'user',
            type: 'instruction',
            content: 'one',
            createdAt: T0,
          })
        ).seq;
      });
      await hasLock;
      const second = b.transaction(async (tx) => {
        await tx.lock('projects', 'p1');
        const before = await tx.messages.lastSeq('p1');
        const seq = (
          await tx.messages.append({
            id: 'm2',
            projectId: 'p1',
            workflowId: null,
            role: 'user',
            type: 'instruction',
            content: 'two',
            createdAt: T0,
          })
        ).seq;
        return { before, seq };
      });
      await waitFor(() => waitsForLock('node-b'), 15_000, 'node B to wait for the project lock');
      release();
      expect(await first).toBe(1);
      expect(await second).toEqual({ before: 1, seq: 2 });
    } finally {
      await holder.close();
    }
  });

  it('a deadlock between two nodes is retried: both transactions commit', async () => {
    await a.repos.projects.insert(project('p2', 'u1'));
    const holder = await openNode('node-holder', { strictTransactions: false, onTransactionSpan: () => {} });
    try {
      let runs = 0;
      let locked!: () => void;
      const hasLock = new Promise<void>((resolve) => (locked = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // p1 then p2 on one node, p2 then p1 on the other: PostgreSQL aborts one of them (40P01).
      const first = holder.transaction(async (tx) => {
        runs++;
        await tx.lock('projects', 'p1');
        locked();
        await released;
        await tx.lock('projects', 'p2');
        await tx.projects.touch('p1', T1);
      });
      await hasLock;
      const second = b.transaction(async (tx) => {
        runs++;
        await tx.lock('projects', 'p2');
        await tx.lock('projects', 'p1');
        await tx.projects.touch('p2', T2);
      });
      await waitFor(() => waitsForLock('node-b'), 15_000, 'node B to wait for p1');
      release();
      await Promise.all([first, second]);
      // Which transaction the deadlock detector aborts, and whether the retry meets the other again,
      // is PostgreSQL's timing: at least one retry ran, and at most two per transaction (six runs).
      expect(runs).toBeGreaterThanOrEqual(3);
      expect(runs).toBeLessThanOrEqual(6);
      expect((await a.repos.projects.findById('p1'))!.updatedAt).toBe(T1);
      expect((await a.repos.projects.findById('p2'))!.updatedAt).toBe(T2);
    } finally {
      await holder.close();
    }
  });

  it('10 concurrent sends into one project through two nodes: message seqs 1..10, workflow seqs in commit order', async () => {
    const send = (node: Store, i: number) =>
      node.transaction(async (tx) => {
        await tx.lock('projects', 'p1');
        const seq = await tx.workflows.nextSeq();
        await tx.workflows.insert(workflow(`w${i}`, 'p1', seq));
        const message = await tx.messages.append({
          id: `m${i}`,
          projectId: 'p1',
          workflowId: `w${i}`,
          role: 'user',
          type: 'instruction',
          content: `${i}`,
          createdAt: T0,
        });
        return { seq, message: message.seq };
      });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? a : b, i)));
    const byMessage = [...results].sort((x, y) => x.message - y.message);
    expect(byMessage.map((r) => r.message)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Commit order (the message numbers) is FIFO order (the workflow seqs).
    const seqs = byMessage.map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(10);
    expect((await a.repos.workflows.listQueued('p1')).map((w) => w.seq)).toEqual(seqs);
  });

  it('two sends to two projects through two nodes at once never get the same workflow seq', async () => {
    await a.repos.projects.insert(project('p2', 'u1'));
    const send = (node: Store, projectId: string, id: string) =>
      node.transaction(async (tx) => {
        await tx.lock('projects', projectId);
        const seq = await tx.workflows.nextSeq();
        await tx.workflows.insert(workflow(id, projectId, seq));
        return seq;
      });
    const seqs = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? a : b, i % 2 === 0 ? 'p1' : 'p2', `w${i}`)),
    );
    expect(new Set(seqs).size).toBe(10);
  });

  it('a notice published in a transaction reaches the other node after commit, never on rollback, and its own node once', async () => {
    const seenByA: string[] = [];
    const seenByB: string[] = [];
    a.events.subscribe('project', (id) => seenByA.push(id));
    b.events.subscribe('project', (id) => seenByB.push(id));
    await expect(
      a.transaction(async (tx) => {
        tx.publish({ kind: 'project', id: 'rolled-back' });
        await tx.projects.touch('p1', T1);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await a.transaction(async (tx) => {
      tx.publish({ kind: 'project', id: 'p1' });
      await tx.projects.touch('p1', T1);
    });
    // Delivered to A's own listeners at once, after COMMIT.
    expect(seenByA).toEqual(['p1']);
    await waitFor(() => seenByB.includes('p1'), 15_000, 'node B to get the notice');
    expect(seenByB).toEqual(['p1']);
    // A sentinel from B, after which A has surely had its own notice echoed back: still once.
    await b.transaction(async (tx) => tx.publish({ kind: 'project', id: 'sentinel' }));
    await waitFor(() => seenByA.includes('sentinel'), 15_000, 'node A to get the sentinel');
    expect(seenByA).toEqual(['p1', 'sentinel']);
  });

  it('a listener connection ended by the server comes back and fires onReset; notices flow again', async () => {
    let resets = 0;
    b.events.onReset(() => resets++);
    const pid = b.listenerPid;
    expect(pid).toBeTypeOf('number');
    expect(b.listening).toBe(true);
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await waitFor(() => !b.listening || resets >= 1, 15_000, 'the store to see its listener gone');
    await waitFor(() => resets >= 1, 15_000, 'onReset after the reconnect');
    expect(b.listening).toBe(true);
    expect(b.listenerPid).not.toBe(pid);
    const seen: string[] = [];
    b.events.subscribe('queued', (id) => seen.push(id));
    await a.transaction(async (tx) => tx.publish({ kind: 'queued', id: 'p1' }));
    await waitFor(() => seen.includes('p1'), 15_000, 'a notice after the reconnect');
  });

  it('projectRowGeneration moves with the project cache: at once for its own writes, on another node with the notice; null while not listening', async () => {
    await a.repos.projects.findById('p1');
    await b.repos.projects.findById('p1');
    const [onA, onB] = [a.projectRowGeneration(), b.projectRowGeneration()];
    expect(onA).toBeTypeOf('number');
    // Reads leave it alone.
    await a.repos.projects.findById('p1');
    expect(a.projectRowGeneration()).toBe(onA);
    // A's write moves A's at once (when it is made); B's once the `cache` notice reached B.
    await a.transaction(async (tx) => {
      await tx.projects.completeWorkspace('p1', T1);
      expect(a.projectRowGeneration()).not.toBe(onA);
      tx.publish({ kind: 'cache', id: 'project:p1' });
    });
    await waitFor(() => b.projectRowGeneration() !== onB, 15_000, 'node B to hear of the change');
    expect((await b.repos.projects.findById('p1'))!.updatedAt).toBe(T1);
    // The listener down: notices may be missed, so there is no generation until it is back, and
    // then another one (the reconnect cleared the cache).
    const whileLost: (number | null)[] = [];
    b.events.onConnectionLost(() => whileLost.push(b.projectRowGeneration()));
    let resets = 0;
    b.events.onReset(() => resets++);
    const before = b.projectRowGeneration();
    await admin.query('select pg_terminate_backend($1)', [b.listenerPid]);
    await waitFor(() => resets >= 1, 15_000, 'the listener back');
    expect(whileLost[0]).toBeNull();
    expect(b.projectRowGeneration()).toBeTypeOf('number');
    expect(b.projectRowGeneration()).not.toBe(before);
  });

  it('claimQueued racing on two nodes: exactly one claims each head', async () => {
    for (let i = 0; i < 10; i++) {
      await a.repos.projects.insert(project(`r${i}`, 'u1'));
      await a.repos.workflows.insert(workflow(`h${i}`, `r${i}`, await a.repos.workflows.nextSeq()));
    }
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        [a, b].map((node, n) =>
          node.repos.workflows.claimQueued(`h${i}`, { status: 'running', runnerId: `node-${n}`, startedAt: T1 }),
        ),
      ).flat(),
    );
    for (let i = 0; i < 10; i++) expect([claims[2 * i], claims[2 * i + 1]].filter(Boolean)).toHaveLength(1);
    expect((await a.repos.workflows.countByStatus()).running).toBe(10);
  });

  it('a second active workflow of a project is refused (false), and the transaction goes on', async () => {
    await a.repos.workflows.insert(workflow('x', 'p1', await a.repos.workflows.nextSeq()));
    await a.repos.workflows.insert(workflow('y', 'p1', await a.repos.workflows.nextSeq()));
    expect(await a.repos.workflows.claimQueued('x', { status: 'running', runnerId: 'a' })).toBe(true);
    const after = await b.transaction(async (tx) => {
      // Trips the one-active index: lost the race, not an error.
      const moved = await tx.workflows.transition('y', 'queued', { status: 'running', runnerId: 'b' });
      await tx.projects.touch('p1', T2);
      return moved;
    });
    expect(after).toBe(false);
    expect((await a.repos.workflows.findById('y'))!.status).toBe('queued');
    expect((await b.repos.projects.findById('p1'))!.updatedAt).toBe(T2);
  });

  it('isHeldBy locks the row: a takeover waits for the holder to commit, then sees its write', async () => {
    await a.repos.workflows.insert(
      workflow('x', 'p1', await a.repos.workflows.nextSeq(), 'running', { runnerId: 'old', leaseExpiresAt: 1 }),
    );
    const holder = await openNode('node-holder', { strictTransactions: false, onTransactionSpan: () => {} });
    try {
      let checked!: () => void;
      const hasChecked = new Promise<void>((resolve) => (checked = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const write = holder.transaction(async (tx) => {
        expect(await tx.workflows.isHeldBy('x', 'old')).toBe(true);
        checked();
        await released;
        await tx.workflows.updateHeld('x', 'old', { stepName: 'written by the holder' });
      });
      await hasChecked;
      const takeover = b.transaction(async (tx) =>
        tx.workflows.transition('x', 'running', { status: 'failed', errorCode: 'interrupted', runnerId: null }, 'old'),
      );
      await waitFor(() => waitsForLock('node-b'), 15_000, 'the takeover to wait for the row lock');
      release();
      await write;
      expect(await takeover).toBe(true);
      expect(await a.repos.workflows.findById('x')).toMatchObject({
        status: 'failed',
        stepName: 'written by the holder',
      });
    } finally {
      await holder.close();
    }
  });

  it('measures the database clock: the offset is finite and small on one machine; ping answers; close is idempotent', async () => {
    expect(Number.isFinite(a.clockOffsetMs())).toBe(true);
    expect(Math.abs(a.clockOffsetMs())).toBeLessThan(500);
    await a.ping();
    const c = await openNode('node-c');
    await c.close();
    await c.close();
    await expect(c.ping()).rejects.toThrow();
  });
});
