/**
 * A PostgreSQL database of its own for a test file (docs/postgresql.md#tests):
 *
 * ```ts
 * describe.skipIf(!postgresAvailable())('on PostgreSQL', () => {
 *   let db: TestDatabase;
 *   beforeAll(async () => { db = await createTestDatabase(); });
 *   afterAll(() => db?.drop());
 *   ...
 * });
 * ```
 *
 * The database is a copy of the run's migrated template (`CREATE DATABASE t_<random> TEMPLATE
 * mb_template`, about 0.15 s), or an empty one for tests of the migrations themselves.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { databaseUrl, readyServer } from './pg-server.js';

/** A test file's database. */
export interface TestDatabase {
  /** `postgres://…/t_<random>`: connect to it with `pg` or give it to the service. */
  url: string;
  /** The database's name (`t_` and 12 hex digits). */
  name: string;
  /** Drops the database, closing whatever connections are still open to it. */
  drop(): Promise<void>;
}

/** True when this run has PostgreSQL (a throwaway cluster or `SVC_TEST_DATABASE_URL`); else the suites skip. */
export function postgresAvailable(): boolean {
  return inject('svcPostgres') !== null;
}

/**
 * Creates a database for the calling test file, starting the run's server first if no file did yet.
 * @param options `empty`: an empty database (no migrations applied) instead of a migrated copy
 * @throws Error when this run has no PostgreSQL (check `postgresAvailable()` first), or when the
 *   server could not be started or the database created
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const server = inject('svcPostgres');
  if (!server) throw new Error('no PostgreSQL in this run: skip the suite with postgresAvailable()');
  const adminUrl = await readyServer(server);
  const name = `t_${randomBytes(6).toString('hex')}`;
  await onAdmin(adminUrl, `CREATE DATABASE "${name}" TEMPLATE "${options.empty ? 'template0' : server.template}"`);
  return {
    url: databaseUrl(adminUrl, name),
    name,
    drop: () => dropDatabase(adminUrl, name),
  };
}

/** Runs one statement on the admin connection (CREATE and DROP DATABASE cannot run in a transaction). */
async function onAdmin(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Drops database `name`. A pool's `end()` resolves once its connections are asked to close, not
 * once they have: a connection still closing when `DROP … WITH (FORCE)` ends it gets the server's
 * 57P01 as an 'error' event nobody listens to any more (an uncaught error of the test run). So the
 * drop first waits (up to 10 s) for the database's connections to go, then forces out any left.
 */
async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (let i = 0; i < 200; i++) {
      const { rows } = await client.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where datname = $1',
        [name],
      );
      if (rows[0]!.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
