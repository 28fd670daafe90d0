/**
 * One builder per deployment in the store (docs/operators.md "One builder per deployment"), on
 * SQLite and, when it is available, PostgreSQL (each with its shipped migrations): a workflow keeps
 * the builder it was sent with, an engine's candidates are the workflows of its own builder (or of
 * none), the queue is counted per builder, and the nodes' rows say who serves the store. Also
 * the stored answers of sends with a `requestId` (docs/contract.md#tools).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowRow } from '../../src/store/rows.js';
import { openStore, type Store } from '../../src/store/store.js';
import { tempDir } from '../helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

const T0 = '2026-01-01T00:00:00.000Z';

/** Opens a fresh store of one kind; `close` removes it. */
type Opened = { store: Store; close(): Promise<void> };
const KINDS: [string, () => Promise<Opened>][] = [
  [
    'sqlite',
    async () => {
      const dir = tempDir('mbm-builders-');
      const store = await openStore({ file: join(dir, 'store.db') });
      return { store, close: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  ],
  ...(postgresAvailable()
    ? [
        [
          'postgres',
          async () => {
            const db: TestDatabase = await createTestDatabase();
            const store = await openStore({ file: ':unused:', databaseUrl: db.url });
            return { store, close: async () => (await store.close(), await db.drop()) };
          },
        ] as [string, () => Promise<Opened>],
      ]
    : []),
];

function workflow(id: string, projectId: string, seq: number, builder: string | null): WorkflowRow {
  return {
    id,
    projectId,
    seq,
    kind: 'build',
    status: 'queued',
    instruction: id,
    stepIndex: 0,
    stepTotal: 0,
    stepName: null,
    runnerId: null,
    leaseExpiresAt: null,
    builder,
    errorCode: null,
    errorMessage: null,
    createdAt: T0,
    startedAt: null,
    finishedAt: null,
  };
}

describe.each(KINDS)('builders and nodes: %s', (_kind, open) => {
  let opened: Opened | undefined;
  afterEach(() => opened?.close());

  it("a workflow keeps its builder; candidates are of the engine's builder or none; the queue is counted per builder", async () => {
    opened = await open();
    const r = opened.store.repos;
    await r.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    for (const id of ['p1', 'p2', 'p3']) {
      await r.projects.insert({
        id,
        ownerId: 'u1',
        name: id,
        description: null,
        visibility: 'private',
        createdAt: T0,
        updatedAt: T0,
        messageSeq: 0,
        deploymentSeq: 0,
        workspaceVersion: 0,
      });
    }
    await r.workflows.insert(workflow('e', 'p1', await r.workflows.nextSeq(), 'expo'));
    await r.workflows.insert(workflow('s', 'p2', await r.workflows.nextSeq(), 'scripted'));
    await r.workflows.insert(workflow('n', 'p3', await r.workflows.nextSeq(), null));
    expect((await r.workflows.findById('s'))!.builder).toBe('scripted');
    expect((await r.workflows.slotCandidates('me', 'expo')).map((c) => c.id)).toEqual(['e', 'n']);
    expect((await r.workflows.slotCandidates('me', 'scripted')).map((c) => c.id)).toEqual(['s', 'n']);
    expect(await r.workflows.countQueuedByBuilder()).toEqual(
      new Map<string | null, number>([
        ['expo', 1],
        ['scripted', 1],
        [null, 1],
      ]),
    );
    expect(await r.workflows.countRunningOf('u1')).toBe(0);
    expect(
      await r.workflows.claimQueued('e', { status: 'running', runnerId: 'me', leaseExpiresAt: 1, startedAt: T0 }),
    ).toBe(true);
    expect(await r.workflows.countRunningOf('u1')).toBe(1);
  });

  it('nodes: written, refreshed, listed by when they were seen, removed', async () => {
    opened = await open();
    const { nodes } = opened.store.repos;
    await nodes.upsert({ runnerId: 'api-1:1:a', role: 'api', builder: 'expo', claims: false, seenAt: 1000 });
    await nodes.upsert({ runnerId: 'worker-1:2:b', role: 'worker', builder: 'scripted', claims: true, seenAt: 2000 });
    expect((await nodes.listSeenSince(1500)).map((n) => n.runnerId)).toEqual(['worker-1:2:b']);
    await nodes.upsert({ runnerId: 'api-1:1:a', role: 'api', builder: 'expo', claims: false, seenAt: 3000 });
    expect(await nodes.listSeenSince(1500)).toEqual([
      { runnerId: 'worker-1:2:b', role: 'worker', builder: 'scripted', claims: true, seenAt: 2000 },
      { runnerId: 'api-1:1:a', role: 'api', builder: 'expo', claims: false, seenAt: 3000 },
    ]);
    await nodes.remove('worker-1:2:b');
    expect((await nodes.listSeenSince(0)).map((n) => n.runnerId)).toEqual(['api-1:1:a']);
  });

  it('send receipts: stored, found while recent, replaced once old, updated, and the old ones deleted', async () => {
    opened = await open();
    const r = opened.store.repos;
    await r.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
    await r.sendReceipts.put({ userId: 'u1', requestId: 'a', result: '{"n":1}', createdAt: 1000 }, 0);
    expect(await r.sendReceipts.find('u1', 'a', 500)).toBe('{"n":1}');
    expect(await r.sendReceipts.find('u1', 'a', 1500)).toBeUndefined();
    expect(await r.sendReceipts.find('u2', 'a', 0)).toBeUndefined();
    // A recent one stays; an old one is replaced.
    await r.sendReceipts.put({ userId: 'u1', requestId: 'a', result: '{"n":2}', createdAt: 2000 }, 500);
    expect(await r.sendReceipts.find('u1', 'a', 0)).toBe('{"n":1}');
    await r.sendReceipts.put({ userId: 'u1', requestId: 'a', result: '{"n":3}', createdAt: 3000 }, 1500);
    expect(await r.sendReceipts.find('u1', 'a', 2500)).toBe('{"n":3}');
    await r.sendReceipts.setResult('u1', 'a', '{"n":4}');
    expect(await r.sendReceipts.find('u1', 'a', 0)).toBe('{"n":4}');
    await r.sendReceipts.deleteBefore('u1', 3500);
    expect(await r.sendReceipts.find('u1', 'a', 0)).toBeUndefined();
  });
});
