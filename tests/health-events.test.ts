/**
 * A node's health on PostgreSQL (docs/operators.md "Roles"): while its change-notice (LISTEN) connection is
 * down, notices from other nodes are missed, so `healthProblem` says `events_disconnected` (503 on
 * `/healthz`); once the connection is back it is healthy again.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';

describe.skipIf(!postgresAvailable())('health on PostgreSQL', () => {
  let db: TestDatabase;
  let app: App;
  let admin: pg.Client;
  const role = `listen_${Math.random().toString(16).slice(2, 10)}`;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // The LISTEN connection signs in as a role of its own (`--database-listen-url`), so that the
    // test can stop it from coming back without touching the pool's connections.
    await admin.query(`CREATE ROLE "${role}" LOGIN`);
    const listenUrl = new URL(db.url);
    listenUrl.username = role;
    listenUrl.password = '';
    app = await createApp({
      dataDir: tempDir('mbm-health-'),
      databaseUrl: db.url,
      databaseListenUrl: listenUrl.toString(),
      builder: 'scripted',
      plans: GENEROUS_PLANS,
      logger: silentLogger(),
    });
    await app.start();
  });

  afterAll(async () => {
    await admin?.query(`ALTER ROLE "${role}" LOGIN`).catch(() => undefined);
    await app?.close();
    await admin?.query(`DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
    await admin?.end();
    await db?.drop();
  });

  it('says events_disconnected while the LISTEN connection cannot come back, and recovers', async () => {
    expect(await app.healthProblem()).toBeNull();
    const listener = (app.store as unknown as { listenerPid: number | null }).listenerPid;
    expect(listener).toBeTypeOf('number');
    // The listener's role may not sign in any more: it cannot reconnect, while the pool (another role) goes on.
    await admin.query(`ALTER ROLE "${role}" NOLOGIN`);
    await admin.query('SELECT pg_terminate_backend($1)', [listener]);
    await waitFor(
      async () => (await app.healthProblem()) === 'events_disconnected',
      15_000,
      'the health check to see the listener down',
    );
    await admin.query(`ALTER ROLE "${role}" LOGIN`);
    await waitFor(async () => (await app.healthProblem()) === null, 15_000, 'the listener to reconnect');
  });
});
