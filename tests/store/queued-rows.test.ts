/**
 * The SQLite store keeps queued workflow rows in memory once read (a queued row never changes
 * while queued): a read of a project's queue is still exact when another process on the same
 * database file claims, cancels and queues workflows between two reads.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { WorkflowRow } from '../../src/store/rows.js';
import { openStore, type Store } from '../../src/store/store.js';
import { tempDir } from '../helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
let dir: string;
let reader: Store;
let writer: Store;

function queued(id: string, seq: number): WorkflowRow {
  return {
    id,
    projectId: 'p1',
    seq,
    kind: 'build',
    status: 'queued',
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
  };
}

beforeEach(async () => {
  dir = tempDir();
  reader = await openStore({ file: join(dir, 'store.db') });
  // A second connection to the same file: another process, as far as the reader can tell.
  writer = await openStore({ file: join(dir, 'store.db') });
  await writer.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
  await writer.repos.projects.insert({
    id: 'p1',
    ownerId: 'u1',
    name: 'p1',
    description: null,
    visibility: 'private',
    createdAt: T0,
    updatedAt: T0,
    messageSeq: 0,
    deploymentSeq: 0,
    workspaceVersion: 0,
  });
  for (const [id, seq] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    await writer.repos.workflows.insert(queued(id, seq));
});
afterEach(async () => {
  await reader.close();
  await writer.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a queue read again after another connection's claim, cancel and new workflows is the queue now", async () => {
  expect((await reader.repos.workflows.listQueued('p1')).map((w) => w.id)).toEqual(['a', 'b', 'c']);

  expect(await writer.repos.workflows.claimQueued('a', { status: 'running', runnerId: 'other', startedAt: T0 })).toBe(
    true,
  );
  expect(await writer.repos.workflows.transition('c', 'queued', { status: 'cancelled', finishedAt: T0 })).toBe(true);
  await writer.repos.workflows.insert(queued('d', 4));

  const now = await reader.repos.workflows.listQueued('p1');
  expect(now.map((w) => w.id)).toEqual(['b', 'd']);
  expect(now).toEqual(await writer.repos.workflows.listQueued('p1'));
  // Read again with every row already seen: the same rows.
  expect(await reader.repos.workflows.listQueued('p1')).toEqual(now);
  for (const row of now) expect(row).toEqual(await reader.repos.workflows.findById(row.id));
});
