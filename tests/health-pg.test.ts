/**
 * `/healthz` of a node on PostgreSQL (docs/postgresql.md, "Change notices"; README "Roles"): 503
 * `store_unavailable` while the node's change-notice connection is down, even when its pool still
 * answers, since it misses token revocations and cancels meanwhile. The real service (`createApp`
 * with a database URL); the listener is kept down by refusing new connections to the database.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

describe.skipIf(!postgresAvailable())('/healthz on PostgreSQL', () => {
  let database: TestDatabase;
  let app: App | undefined;
  let admin: pg.Client | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    const adminUrl = new URL(database.url);
    adminUrl.pathname = '/postgres';
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.query(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    await app?.close();
    await admin?.end();
    await database?.drop();
  });

  it('answers store_unavailable while the change-notice connection is down, and ok once it is back', async () => {
    app = await createApp({ dataDir: tempDir('mbm-health-pg-'), databaseUrl: database.url, logger: silentLogger(), builderInstance: new ManualBuilder(), pollIntervalMs: 3_600_000, plans: GENEROUS_PLANS });
    await app.start();
    expect(await app.healthProblem()).toBeNull();
    const store = app.store as App['store'] & { listenerPid: number | null };
    const listener = store.listenerPid;
    expect(listener).not.toBeNull();
    // New connections are refused (the listener cannot come back); the pool's open one still answers.
    await admin!.query(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS false`);
    await admin!.query('SELECT pg_terminate_backend($1)', [listener]);
    await waitFor(() => !store.listening, 10_000, 'the node to see its listener gone');
    await store.ping();
    expect(await app.healthProblem()).toBe('store_unavailable');
    await admin!.query(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS true`);
    await waitFor(() => store.listening, 15_000, 'the listener to reconnect');
    expect(await app.healthProblem()).toBeNull();
  });
});
