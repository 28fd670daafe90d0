/** Project rules of docs/contract.md#tools and docs/contract.md#limits-and-plans, on the services with real SQLite and the real migrations. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { ServiceError } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SqlProjectRepo } from '../src/store/sql/project-repo.js';
import { sqliteDialect } from '../src/store/sqlite/dialect.js';
import { ChangeWatch, ReadCache } from '../src/store/read-cache.js';
import { tempDir, waitFor } from './helpers.js';
import { sqliteOf, dbOf } from './store-access.js';

let now = new Date('2026-11-22T09:00:00.000Z');
let app: App;
const advance = (ms: number) => (now = new Date(now.getTime() + ms));

beforeEach(async () => {
  now = new Date('2026-11-22T09:00:00.000Z');
  app = await createApp({
    dataDir: tempDir(),
    databaseFile: ':memory:',
    builder: 'scripted',
    logger: silentLogger(),
    clock: () => now,
  });
});
afterEach(() => app.store.close());

async function caller(name: string) {
  return await app.tokens.authenticate((await app.tokens.create(name)).token);
}

async function thrown(fn: () => unknown): Promise<ServiceError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
}

describe('projects', () => {
  it('creates with defaults: private, description null, name kept as given, updatedAt = createdAt', async () => {
    const alice = await caller('alice');
    const p = await app.projects.create(alice, { name: '  Spaced name  ' });
    expect(p).toMatchObject({ name: '  Spaced name  ', description: null, visibility: 'private' });
    expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(p.createdAt).toBe('2026-11-22T09:00:00.000Z');
    expect(p.updatedAt).toBe(p.createdAt);
  });

  it("lists only the caller's projects, public and private, newest first", async () => {
    const alice = await caller('alice');
    const bob = await caller('bob');
    const a1 = await app.projects.create(alice, { name: 'a1', visibility: 'public' });
    advance(1000);
    const a2 = await app.projects.create(alice, { name: 'a2' });
    await app.projects.create(bob, { name: 'b1', visibility: 'public' });
    expect((await app.projects.list(alice)).map((p) => p.id)).toEqual([a2.id, a1.id]);
    expect(await app.projects.list(await caller('carol'))).toEqual([]);
  });

  it("reads own projects and others' public ones; another's private is forbidden; unknown is not found", async () => {
    const alice = await caller('alice');
    const bob = await caller('bob');
    const priv = await app.projects.create(alice, { name: 'p' });
    const pub = await app.projects.create(alice, { name: 'q', visibility: 'public' });
    expect((await app.projects.get(alice, priv.id)).id).toBe(priv.id);
    expect((await app.projects.get(bob, pub.id)).id).toBe(pub.id);
    expect((await thrown(() => app.projects.get(bob, priv.id))).kind).toBe('forbidden');
    expect((await thrown(() => app.projects.get(alice, '00000000-0000-4000-8000-000000000000'))).kind).toBe(
      'not_found',
    );
  });

  it('refuses the 11th creation in an hour with scope project_creation, stores nothing, and allows it once the hour has passed', async () => {
    const alice = await caller('alice');
    for (let i = 0; i < 10; i++) {
      await app.projects.create(alice, { name: `p${i}` });
      advance(60_000);
    }
    const error = await thrown(() => app.projects.create(alice, { name: 'eleventh' }));
    expect(error.kind).toBe('rate_limited');
    expect(error.data).toMatchObject({ scope: 'project_creation', limit: 10 });
    expect(error.data!.resetAt).toBe(Date.parse('2026-11-22T10:00:00.000Z') / 1000);
    expect(await app.projects.list(alice)).toHaveLength(10);
    advance(60 * 60_000 - 10 * 60_000 + 1);
    expect((await app.projects.create(alice, { name: 'later' })).name).toBe('later');
  });

  it('caps projects per plan with reason project_limit_reached, and the operator can raise it', async () => {
    await app.store.close();
    app = await createApp({
      dataDir: tempDir(),
      databaseFile: ':memory:',
      builder: 'scripted',
      logger: silentLogger(),
      clock: () => now,
      plans: {
        free: { requestsPerMinute: 100, projectCreationsPerHour: 1000, maxProjects: 3 },
        big: { requestsPerMinute: 100, projectCreationsPerHour: 1000, maxProjects: 5 },
      },
    });
    let alice = await caller('alice');
    for (let i = 0; i < 3; i++) await app.projects.create(alice, { name: `p${i}` });
    const error = await thrown(() => app.projects.create(alice, { name: 'over' }));
    expect(error.kind).toBe('forbidden');
    expect(error.data).toMatchObject({ reason: 'project_limit_reached', limit: 3 });
    expect(await app.projects.list(alice)).toHaveLength(3);
    await app.tokens.setPlan('alice', 'big');
    alice = await app.tokens.authenticate((await app.tokens.create('alice')).token);
    expect((await app.projects.create(alice, { name: 'fourth' })).name).toBe('fourth');
  });
});

describe('read caches', () => {
  it("the project cache is exact for this process's writes and sees another connection's commit after the recheck interval", async () => {
    const dir = tempDir();
    const fileApp = await createApp({ dataDir: dir, builder: 'scripted', logger: silentLogger() });
    const alice = await fileApp.tokens.authenticate((await fileApp.tokens.create('alice')).token);
    const p = await fileApp.projects.create(alice, { name: 'cached' });
    const repo = new SqlProjectRepo(
      sqliteDialect(dbOf(fileApp.store)),
      new ReadCache(new ChangeWatch(fileApp.store.events)),
    );
    expect((await repo.findById(p.id))!.updatedAt).toBe(p.updatedAt);
    await repo.touch(p.id, '2026-11-22T10:00:00.000Z');
    expect((await repo.findById(p.id))!.updatedAt).toBe('2026-11-22T10:00:00.000Z');
    const other = new Database(join(dir, 'mobile-builder.db'));
    other.prepare('update projects set name = ? where id = ?').run('renamed elsewhere', p.id);
    other.close();
    // Seen once the store's poll of other connections' commits has run (every 250 ms).
    expect(
      (await waitFor(
        async () => ((await repo.findById(p.id))!.name === 'renamed elsewhere' ? true : null),
        5_000,
        'the commit to be seen',
      )) === true,
    ).toBe(true);
    await fileApp.store.close();
  });

  it('a token revoked by this process is refused at once, even after a cached success', async () => {
    const { token, summary } = await app.tokens.create('alice');
    expect((await app.tokens.authenticate(token)).userName).toBe('alice');
    await app.tokens.revoke(summary.id);
    expect((await thrown(() => app.tokens.authenticate(token))).kind).toBe('unauthenticated');
  });

  it('an expired token is refused even when it is cached', async () => {
    const { token } = await app.tokens.create('alice', 1000);
    expect((await app.tokens.authenticate(token)).userName).toBe('alice');
    advance(1001);
    expect((await thrown(() => app.tokens.authenticate(token))).kind).toBe('unauthenticated');
  });
});

describe('tokens', () => {
  it('stores only a hash, refuses unknown, revoked and expired tokens', async () => {
    const { token, summary } = await app.tokens.create('alice', 60_000);
    expect(token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    const raw = sqliteOf(app.store).prepare('select * from api_tokens').all();
    expect(JSON.stringify(raw)).not.toContain(token);
    expect((await app.tokens.authenticate(token)).userName).toBe('alice');
    expect((await thrown(() => app.tokens.authenticate(token + 'x'))).kind).toBe('unauthenticated');
    expect((await thrown(() => app.tokens.authenticate(undefined))).kind).toBe('unauthenticated');
    advance(60_001);
    expect((await thrown(() => app.tokens.authenticate(token))).kind).toBe('unauthenticated');
    expect((await app.tokens.list('alice'))[0]!.state).toBe('expired');
    const second = await app.tokens.create('alice');
    expect(await app.tokens.revoke(second.summary.id)).toBe(true);
    expect((await thrown(() => app.tokens.authenticate(second.token))).kind).toBe('unauthenticated');
    expect(await app.tokens.revoke('nope')).toBe(false);
    expect(summary.prefix).toBe(`${token.slice(0, 8)}…`);
  });
});
