/**
 * The tests' PostgreSQL set-up (docs/postgresql.md#tests): where the server comes from, the
 * failure on CI without one, and a database of its own for each test file.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';
import { postgresSource } from '../setup/postgres.js';

describe('where the PostgreSQL of a test run comes from', () => {
  const noBin = () => null;
  const neverCalled = () => {
    throw new Error('the binaries are not looked for when a URL is given');
  };

  it('is SVC_TEST_DATABASE_URL when set', () => {
    expect(postgresSource({ SVC_TEST_DATABASE_URL: ' postgres://u@db:5432/x ', CI: 'true' }, neverCalled)).toEqual({
      kind: 'external',
      url: 'postgres://u@db:5432/x',
    });
  });

  it('is a throwaway cluster of the installed binaries otherwise', () => {
    expect(postgresSource({}, () => '/usr/lib/postgresql/15/bin')).toEqual({
      kind: 'cluster',
      bin: '/usr/lib/postgresql/15/bin',
    });
  });

  it('fails the run with CI=true and no PostgreSQL, saying what to install', () => {
    expect(() => postgresSource({ CI: 'true' }, noBin)).toThrow(
      /CI=true and no PostgreSQL.*apt-get install postgresql.*SVC_TEST_DATABASE_URL/,
    );
  });

  it('skips the PostgreSQL suites with one line elsewhere', () => {
    const source = postgresSource({ SVC_TEST_DATABASE_URL: '' }, noBin);
    expect(source).toMatchObject({ kind: 'none' });
    expect(source.kind === 'none' && source.message).toMatch(
      /^\[postgres\] no PostgreSQL here: the PostgreSQL suites skip \(.*\)\.$/,
    );
    expect(source.kind === 'none' && source.message.includes('\n')).toBe(false);
  });
});

describe.skipIf(!postgresAvailable())('a test database', () => {
  const databases: TestDatabase[] = [];
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    databases.push(...(await Promise.all([createTestDatabase(), createTestDatabase()])));
    for (const database of databases) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      clients.push(client);
    }
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await Promise.all(databases.map((database) => database.drop()));
  });

  it('is a migrated copy of the template, one per caller, separate from the others', async () => {
    const [a, b] = clients as [pg.Client, pg.Client];
    expect(databases[0]!.name).not.toBe(databases[1]!.name);
    expect(databases[0]!.name).toMatch(/^t_[0-9a-f]{12}$/);
    await a.query("INSERT INTO users (id, name, created_at) VALUES ('u1', 'only-in-a', '2026-01-01T00:00:00.000Z')");
    expect((await a.query('SELECT name FROM users')).rows).toEqual([{ name: 'only-in-a' }]);
    expect((await b.query('SELECT name FROM users')).rows).toEqual([]);
  });

  it('is gone after drop, even with a connection still open', async () => {
    const extra = await createTestDatabase({ empty: true });
    const client = new pg.Client({ connectionString: extra.url });
    client.on('error', () => {});
    await client.connect();
    const tables = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.rows[0].n).toBe(0);
    await extra.drop();
    const [a] = clients as [pg.Client];
    expect(
      (await a.query('SELECT count(*)::int AS n FROM pg_database WHERE datname = $1', [extra.name])).rows[0].n,
    ).toBe(0);
    await client.end().catch(() => {});
  });
});
