/** Project rules of docs/contract.md#tools and docs/contract.md#limits-and-plans, on the services with real SQLite and the real migrations. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { ServiceError } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ProjectRepo } from '../src/store/project-repo.js';
import { ExternalChangeWatch, ReadCache } from '../src/store/read-cache.js';
import { tempDir } from './helpers.js';

let now = new Date('2026-11-22T09:00:00.000Z');
let app: App;
const advance = (ms: number) => (now = new Date(now.getTime() + ms));

beforeEach(() => {
  now = new Date('2026-11-22T09:00:00.000Z');
  app = createApp({ dataDir: tempDir(), databaseFile: ':memory:', builder: 'scripted', logger: silentLogger(), clock: () => now });
});
afterEach(() => app.store.close());

function caller(name: string) {
  return app.tokens.authenticate(app.tokens.create(name).token);
}

function thrown(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
}

describe('projects', () => {
  it('creates with defaults: private, description null, name kept as given, updatedAt = createdAt', () => {
    const alice = caller('alice');
    const p = app.projects.create(alice, { name: '  Spaced name  ' });
    expect(p).toMatchObject({ name: '  Spaced name  ', description: null, visibility: 'private' });
    expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(p.createdAt).toBe('2026-11-22T09:00:00.000Z');
    expect(p.updatedAt).toBe(p.createdAt);
  });

  it('lists only the caller\'s projects, public and private, newest first', () => {
    const alice = caller('alice');
    const bob = caller('bob');
    const a1 = app.projects.create(alice, { name: 'a1', visibility: 'public' });
    advance(1000);
    const a2 = app.projects.create(alice, { name: 'a2' });
    app.projects.create(bob, { name: 'b1', visibility: 'public' });
    expect(app.projects.list(alice).map((p) => p.id)).toEqual([a2.id, a1.id]);
    expect(app.projects.list(caller('carol'))).toEqual([]);
  });

  it('reads own projects and others\' public ones; another\'s private is forbidden; unknown is not found', () => {
    const alice = caller('alice');
    const bob = caller('bob');
    const priv = app.projects.create(alice, { name: 'p' });
    const pub = app.projects.create(alice, { name: 'q', visibility: 'public' });
    expect(app.projects.get(alice, priv.id).id).toBe(priv.id);
    expect(app.projects.get(bob, pub.id).id).toBe(pub.id);
    expect(thrown(() => app.projects.get(bob, priv.id)).kind).toBe('forbidden');
    expect(thrown(() => app.projects.get(alice, '00000000-0000-4000-8000-000000000000')).kind).toBe('not_found');
  });

  it('refuses the 11th creation in an hour with scope project_creation, stores nothing, and allows it once the hour has passed', () => {
    const alice = caller('alice');
    for (let i = 0; i < 10; i++) {
      app.projects.create(alice, { name: `p${i}` });
      advance(60_000);
    }
    const error = thrown(() => app.projects.create(alice, { name: 'eleventh' }));
    expect(error.kind).toBe('rate_limited');
    expect(error.data).toMatchObject({ scope: 'project_creation', limit: 10 });
    expect(error.data!.resetAt).toBe(Date.parse('2026-11-22T10:00:00.000Z') / 1000);
    expect(app.projects.list(alice)).toHaveLength(10);
    advance(60 * 60_000 - 10 * 60_000 + 1);
    expect(app.projects.create(alice, { name: 'later' }).name).toBe('later');
  });

  it('caps projects per plan with reason project_limit_reached, and the operator can raise it', () => {
    app.store.close();
    app = createApp({
      dataDir: tempDir(),
      databaseFile: ':memory:',
      builder: 'scripted',
      logger: silentLogger(),
      clock: () => now,
      plans: { free: { requestsPerMinute: 100, projectCreationsPerHour: 1000, maxProjects: 3 }, big: { requestsPerMinute: 100, projectCreationsPerHour: 1000, maxProjects: 5 } },
    });
    let alice = caller('alice');
    for (let i = 0; i < 3; i++) app.projects.create(alice, { name: `p${i}` });
    const error = thrown(() => app.projects.create(alice, { name: 'over' }));
    expect(error.kind).toBe('forbidden');
    expect(error.data).toMatchObject({ reason: 'project_limit_reached', limit: 3 });
    expect(app.projects.list(alice)).toHaveLength(3);
    app.tokens.setPlan('alice', 'big');
    alice = app.tokens.authenticate(app.tokens.create('alice').token);
    expect(app.projects.create(alice, { name: 'fourth' }).name).toBe('fourth');
  });
});

describe('read caches', () => {
  it('the project cache is exact for this process\'s writes and sees another connection\'s commit after the recheck interval', async () => {
    const dir = tempDir();
    const fileApp = createApp({ dataDir: dir, builder: 'scripted', logger: silentLogger() });
    const alice = fileApp.tokens.authenticate(fileApp.tokens.create('alice').token);
    const p = fileApp.projects.create(alice, { name: 'cached' });
    const repo = new ProjectRepo(fileApp.store.db, new ReadCache(new ExternalChangeWatch(fileApp.store.dataVersion, 50)));
    expect(repo.findById(p.id)!.updatedAt).toBe(p.updatedAt);
    repo.touch(p.id, '2026-11-22T10:00:00.000Z');
    expect(repo.findById(p.id)!.updatedAt).toBe('2026-11-22T10:00:00.000Z');
    const other = new Database(join(dir, 'mobile-builder.db'));
    other.prepare('update projects set name = ? where id = ?').run('renamed elsewhere', p.id);
    other.close();
    await new Promise((r) => setTimeout(r, 80));
    expect(repo.findById(p.id)!.name).toBe('renamed elsewhere');
    fileApp.store.close();
  });

  it('a token revoked by this process is refused at once, even after a cached success', () => {
    const { token, summary } = app.tokens.create('alice');
    expect(app.tokens.authenticate(token).userName).toBe('alice');
    app.tokens.revoke(summary.id);
    expect(thrown(() => app.tokens.authenticate(token)).kind).toBe('unauthenticated');
  });

  it('an expired token is refused even when it is cached', () => {
    const { token } = app.tokens.create('alice', 1000);
    expect(app.tokens.authenticate(token).userName).toBe('alice');
    advance(1001);
    expect(thrown(() => app.tokens.authenticate(token)).kind).toBe('unauthenticated');
  });
});

describe('tokens', () => {
  it('stores only a hash, refuses unknown, revoked and expired tokens', () => {
    const { token, summary } = app.tokens.create('alice', 60_000);
    expect(token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    const raw = app.store.sqlite.prepare('select * from api_tokens').all();
    expect(JSON.stringify(raw)).not.toContain(token);
    expect(app.tokens.authenticate(token).userName).toBe('alice');
    expect(thrown(() => app.tokens.authenticate(token + 'x')).kind).toBe('unauthenticated');
    expect(thrown(() => app.tokens.authenticate(undefined)).kind).toBe('unauthenticated');
    advance(60_001);
    expect(thrown(() => app.tokens.authenticate(token)).kind).toBe('unauthenticated');
    expect(app.tokens.list('alice')[0]!.state).toBe('expired');
    const second = app.tokens.create('alice');
    expect(app.tokens.revoke(second.summary.id)).toBe(true);
    expect(thrown(() => app.tokens.authenticate(second.token)).kind).toBe('unauthenticated');
    expect(app.tokens.revoke('nope')).toBe(false);
    expect(summary.prefix).toBe(`${token.slice(0, 8)}…`);
  });
});
