/**
 * The SQLite store's row generation (docs/architecture.md "The session cache"), which keys the
 * session cache: it moves on every write this process makes to the rows a session shows (when
 * the write is made, before its transaction commits) and on every commit of another connection,
 * and not on reads nor on writes no session shows. Its list of read methods is checked against
 * the SQL they run: a write listed as a read would let the cache serve a stale session.
 * A real store on a real SQLite file with the real migrations.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import { READ_METHODS } from '../../src/store/sqlite/row-generation.js';
import { tempDir } from '../helpers.js';
import { sqliteOf } from '../store-access.js';

let dir: string;
let file: string;
let store: Store;

beforeEach(async () => {
  dir = tempDir('mbm-generation-');
  file = join(dir, 'store.db');
  store = await openStore({ file });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const user = () => ({
  id: randomUUID(),
  name: `user-${randomUUID()}`,
  plan: 'free',
  createdAt: new Date().toISOString(),
});

/** The SQL of every statement run on `sqlite` while `call` runs. */
async function statementsOf(sqlite: Database.Database, call: () => Promise<unknown>): Promise<string[]> {
  const sources: string[] = [];
  const proto = Object.getPrototypeOf(sqlite.prepare('select 1')) as Record<string, (...args: unknown[]) => unknown>;
  const originals = (['get', 'all', 'run', 'iterate'] as const).map((name) => [name, proto[name]!] as const);
  for (const [name, original] of originals) {
    proto[name] = function (this: { source: string }, ...args: unknown[]) {
      sources.push(this.source);
      return original.apply(this, args);
    };
  }
  try {
    await call();
  } finally {
    for (const [name, original] of originals) proto[name] = original;
  }
  return sources;
}

it('every method listed as a read runs only SELECT statements (renewLease writes only the lease expiry, which no session shows)', async () => {
  const sqlite = sqliteOf(store);
  const repos = store.repos as unknown as Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>>;
  let checked = 0;
  for (const [repo, methods] of Object.entries(READ_METHODS)) {
    for (const method of methods) {
      // An id, a text and a number fit most reads; a read whose second argument is a limit gets a number.
      const args = `${repo}.${method}` === 'releases.recent' ? [randomUUID(), 20] : [randomUUID(), 'x', 0];
      const sources = await statementsOf(sqlite, () => repos[repo]![method]!(...args));
      expect(sources.length, `${repo}.${method} runs a statement`).toBeGreaterThan(0);
      for (const source of sources) {
        const sql = source.trim().toLowerCase();
        if (repo === 'workflows' && method === 'renewLease')
          expect(sql).toMatch(/^update "workflows" set "lease_expires_at" = \? where /);
        else expect(sql, `${repo}.${method}`).toMatch(/^(select|with) /);
      }
      checked++;
    }
  }
  expect(checked).toBeGreaterThan(30);
});

it('moves on a write to the rows a session shows, at once inside a transaction, and not on reads or other writes', async () => {
  const start = store.rowGeneration();
  expect(start).not.toBeNull();
  await store.repos.workflows.findActive(randomUUID());
  await store.repos.users.findByName('nobody');
  expect(store.rowGeneration()).toBe(start);
  // The request counters are no session's rows.
  await store.rateWindows!.claim({ key: 'k', size: 1, expire: Date.now() + 60_000, now: Date.now(), limit: 10 });
  expect(store.rowGeneration()).toBe(start);

  await store.repos.users.insert(user());
  const afterWrite = store.rowGeneration();
  expect(afterWrite).not.toBe(start);
  expect(store.rowGeneration()).toBe(afterWrite);

  let inside: number | null = null;
  await store.transaction(async (tx) => {
    await tx.users.insert(user());
    // Before COMMIT: a view read now (its reads wait for the commit) is of the new rows.
    inside = store.rowGeneration();
  });
  expect(inside).not.toBe(afterWrite);
});

it("moves on another connection's commit, of any table", async () => {
  const start = store.rowGeneration();
  const other = new Database(file);
  try {
    other.pragma('busy_timeout = 5000');
    other
      .prepare('insert into users (id, name, plan, created_at) values (?, ?, ?, ?)')
      .run(randomUUID(), 'elsewhere', 'free', new Date().toISOString());
    const afterOther = store.rowGeneration();
    expect(afterOther).not.toBe(start);
    expect(store.rowGeneration()).toBe(afterOther);
    other.prepare('delete from rate_limits').run();
    expect(store.rowGeneration()).not.toBe(afterOther);
  } finally {
    other.close();
  }
});

it("with lastLook, takes another connection's commit as of the store's last look: the next look of any reader shows it", async () => {
  const start = store.rowGeneration();
  const other = new Database(file);
  try {
    other.pragma('busy_timeout = 5000');
    other
      .prepare('insert into users (id, name, plan, created_at) values (?, ?, ?, ?)')
      .run(randomUUID(), 'elsewhere', 'free', new Date().toISOString());
    // No look since the commit: the last one stands (a caller that passes lastLook looked after its request arrived).
    expect(store.rowGeneration(true)).toBe(start);
    // The token cache's exact watch looks (StoreEvents.catchUp); the row generation takes that look.
    store.events.catchUp?.();
    const afterOther = store.rowGeneration(true);
    expect(afterOther).not.toBe(start);
    expect(store.rowGeneration()).toBe(afterOther);
  } finally {
    other.close();
  }
});

/** A second connection to the store's file, and a commit of a new user through it. */
function otherConnection() {
  const other = new Database(file);
  other.pragma('busy_timeout = 5000');
  const commitElsewhere = () =>
    other
      .prepare('insert into users (id, name, plan, created_at) values (?, ?, ?, ?)')
      .run(randomUUID(), `elsewhere-${randomUUID()}`, 'free', new Date().toISOString());
  return { commitElsewhere, close: () => other.close() };
}

it("inside oneLook, the first look at other connections' commits serves the rest; outside, each look reads again", async () => {
  const sqlite = sqliteOf(store);
  const { commitElsewhere, close } = otherConnection();
  try {
    const before = store.rowGeneration();
    let looks: number[] = [];
    const reads = await statementsOf(sqlite, async () => {
      looks = store.oneLook(() => {
        const first = store.rowGeneration() as number;
        // Committed after the one look: it shows only to looks after oneLook returned.
        commitElsewhere();
        return [first, store.rowGeneration() as number, store.rowGeneration() as number];
      });
    });
    expect(reads.filter((sql) => /data_version/i.test(sql))).toHaveLength(1);
    expect(looks).toEqual([before, before, before]);
    expect(store.rowGeneration()).not.toBe(before);
    // A commit made before oneLook started shows at its first look.
    const settled = store.rowGeneration();
    commitElsewhere();
    expect(store.oneLook(() => store.rowGeneration())).not.toBe(settled);
    // What oneLook throws is thrown, and the looks after it read again.
    expect(() =>
      store.oneLook(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    const now = store.rowGeneration();
    commitElsewhere();
    expect(store.rowGeneration()).not.toBe(now);
  } finally {
    close();
  }
});

it('oneLook calls given the same shared look read once between them; a new shared look reads again', async () => {
  const sqlite = sqliteOf(store);
  const { commitElsewhere, close } = otherConnection();
  try {
    const settled = store.rowGeneration();
    // Committed before the shared look's first read: that read shows it.
    commitElsewhere();
    const shared = { looked: false };
    let looks: number[] = [];
    const reads = await statementsOf(sqlite, async () => {
      const first = store.oneLook(() => store.rowGeneration() as number, shared);
      // Committed after the shared look: the later calls of that look do not read it.
      commitElsewhere();
      const second = store.oneLook(() => store.rowGeneration() as number, shared);
      const third = store.oneLook(() => store.rowGeneration() as number, shared);
      looks = [first, second, third];
    });
    expect(shared.looked).toBe(true);
    expect(reads.filter((sql) => /data_version/i.test(sql))).toHaveLength(1);
    expect(looks[0]).not.toBe(settled);
    expect(looks).toEqual([looks[0], looks[0], looks[0]]);
    // Another shared look reads again, and sees the later commit.
    expect(store.oneLook(() => store.rowGeneration(), { looked: false })).not.toBe(looks[0]);
  } finally {
    close();
  }
});
