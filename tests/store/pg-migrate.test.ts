/**
 * The PostgreSQL migrations on a real server (docs/postgresql.md#migrations): `migratePostgres` from four
 * nodes at once, the database clock `svc_now_ms()`, and the one-active-workflow rule of the schema.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/store/pg/migrate.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

describe.skipIf(!postgresAvailable())('PostgreSQL migrations', () => {
  const databases: TestDatabase[] = [];
  const clients: pg.Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await Promise.all(databases.map((database) => database.drop()));
  });

  async function connect(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  }

  describe('four nodes migrating a fresh database at once', () => {
    let client: pg.Client;
    beforeAll(async () => {
      const fresh = await createTestDatabase({ empty: true });
      databases.push(fresh);
      await Promise.all([1, 2, 3, 4].map(() => migratePostgres(fresh.url)));
      client = await connect(fresh.url);
    });

    it('apply every migration exactly once', async () => {
      const journal = (await import('../../drizzle-pg/meta/_journal.json', { with: { type: 'json' } })).default as {
        entries: unknown[];
      };
      const applied = await client.query('SELECT hash FROM drizzle.__drizzle_migrations');
      expect(applied.rowCount).toBe(journal.entries.length);
      expect(new Set(applied.rows.map((row: { hash: string }) => row.hash)).size).toBe(journal.entries.length);
    });

    it('leave each table there once, rate_limits unlogged', async () => {
      const tables = await client.query<{ relname: string; relpersistence: string }>(
        "SELECT relname, relpersistence FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY relname",
      );
      const names = tables.rows.map((row) => row.relname);
      expect(names).toContain('workflows');
      expect(names).toContain('blob_chunks');
      expect(new Set(names).size).toBe(names.length);
      expect(tables.rows.find((row) => row.relname === 'rate_limits')?.relpersistence).toBe('u');
    });

    it('run again as a no-op', async () => {
      await migratePostgres(databases[0]!.url);
      const applied = await client.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
      const journal = (await import('../../drizzle-pg/meta/_journal.json', { with: { type: 'json' } })).default as {
        entries: unknown[];
      };
      expect(applied.rows[0].n).toBe(journal.entries.length);
    });
  });

  it('roll a failed migration back whole and release the lock, so the next attempt runs', async () => {
    const fresh = await createTestDatabase({ empty: true });
    databases.push(fresh);
    const client = await connect(fresh.url);
    // A table in the way: 0000 fails at CREATE TABLE users, after creating api_tokens and others.
    await client.query('CREATE TABLE users (x int)');
    await expect(migratePostgres(fresh.url)).rejects.toThrow(/users/);
    const left = await client.query("SELECT to_regclass('public.api_tokens') AS t");
    expect(left.rows[0].t).toBeNull();
    await client.query('DROP TABLE users');
    await migratePostgres(fresh.url);
    const made = await client.query("SELECT to_regclass('public.workflows') AS t");
    expect(made.rows[0].t).toBe('workflows');
  });

  describe('a migrated database', () => {
    let client: pg.Client;
    beforeAll(async () => {
      const database = await createTestDatabase();
      databases.push(database);
      client = await connect(database.url);
    });

    it('answers svc_now_ms() with the database clock in ms since the epoch, moving on within a transaction', async () => {
      await client.query('BEGIN');
      const first = await client.query<{ ms: string }>('SELECT svc_now_ms() AS ms');
      await client.query('SELECT pg_sleep(0.01)');
      const second = await client.query<{ ms: string; now: string }>(
        'SELECT svc_now_ms() AS ms, (extract(epoch from now()) * 1000)::bigint AS now',
      );
      await client.query('COMMIT');
      const [a, b] = [Number(first.rows[0]!.ms), Number(second.rows[0]!.ms)];
      expect(b).toBeGreaterThanOrEqual(a + 10);
      // now() is frozen at BEGIN; svc_now_ms() is not.
      expect(Number(second.rows[0]!.now)).toBeLessThanOrEqual(a);
      expect(Math.abs(a - Date.now())).toBeLessThan(60_000);
    });

    it('refuses a second active workflow of one project, allows queued ones and other projects', async () => {
      const now = new Date().toISOString();
      const userId = randomUUID();
      const [p1, p2] = [randomUUID(), randomUUID()];
      await client.query('INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)', [userId, `u-${userId}`, now]);
      for (const id of [p1, p2]) {
        await client.query(
          "INSERT INTO projects (id, owner_id, name, visibility, created_at, updated_at) VALUES ($1, $2, 'p', 'private', $3, $3)",
          [id, userId, now],
        );
      }
      const insert = (projectId: string, status: string) =>
        client.query<{ seq: string }>(
          "INSERT INTO workflows (id, project_id, kind, status, instruction, created_at) VALUES ($1, $2, 'build', $3, 'x', $4) RETURNING seq",
          [randomUUID(), projectId, status, now],
        );
      const running = await insert(p1, 'running');
      await expect(insert(p1, 'waiting_for_input')).rejects.toMatchObject({
        code: '23505',
        constraint: 'workflows_one_active_per_project',
      });
      await expect(insert(p1, 'cancelling')).rejects.toMatchObject({ code: '23505' });
      const queued = await insert(p1, 'queued');
      await insert(p1, 'queued');
      await insert(p2, 'running');
      // The identity column gives the FIFO order.
      expect(Number(queued.rows[0]!.seq)).toBeGreaterThan(Number(running.rows[0]!.seq));
      const counters = await client.query(
        'SELECT message_seq, deployment_seq, workspace_version, last_runner_host FROM projects WHERE id = $1',
        [p1],
      );
      expect(counters.rows[0]).toEqual({
        message_seq: 0,
        deployment_seq: 0,
        workspace_version: 0,
        last_runner_host: null,
      });
    });

    it('has the rate_limits layout RateLimiterPostgres reads and writes (created by the migration, not the library)', async () => {
      const limiter = new RateLimiterPostgres({
        storeClient: client,
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix: 'test',
        points: 2,
        duration: 60,
      });
      await limiter.consume('token-a');
      await limiter.consume('token-a');
      await expect(limiter.consume('token-a')).rejects.toBeInstanceOf(RateLimiterRes);
      const row = await client.query('SELECT key, points, expire FROM rate_limits');
      expect(row.rows).toEqual([{ key: 'test:token-a', points: 3, expire: expect.any(String) }]);
      expect(Number(row.rows[0].expire)).toBeGreaterThan(Date.now());
    });
  });
});
