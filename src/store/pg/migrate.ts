/**
 * Applies the shipped PostgreSQL migrations (`drizzle-pg/`) to a database, safely from several
 * nodes at once (docs/postgresql.md#migrations).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

/** Folder of the shipped migrations: `<package>/drizzle-pg`, both from `src/` and from `dist/`. */
const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'drizzle-pg');

/**
 * Key of the session-level advisory lock held while migrating (the bytes of `mbmigrat`). drizzle's
 * PostgreSQL migrator takes no lock of its own: without this, nodes starting together would each
 * see a migration as pending and apply it twice.
 */
const MIGRATION_LOCK_KEY = '7881982597326332276';

/** Longest connect of the migrating connection (ms). */
const MIGRATE_CONNECT_TIMEOUT_MS = 10_000;
/** Longest statement of a migration run seen from the client, the wait for the lock included (ms). */
const MIGRATE_QUERY_TIMEOUT_MS = 120_000;

/**
 * Applies every pending migration of `drizzle-pg/` on one dedicated connection that holds
 * `pg_advisory_lock(MIGRATION_LOCK_KEY)` for the whole run: concurrent callers (four nodes starting
 * at once) wait in turn, and each one after the first finds nothing left to apply. The lock is
 * released when the connection closes, even if a migration fails.
 * @param url a `postgres://` or `postgresql://` connection string
 * @returns how many migrations this call applied (0 when the database was up to date).
 * @throws the driver's error when the database cannot be reached or a migration fails (that
 *   migration's transaction is rolled back).
 */
export async function migratePostgres(url: string): Promise<number> {
  // Bounded on the client: a database that does not answer fails the start-up instead of hanging
  // it. The bound on a statement leaves room to wait for another node's migrations (the lock).
  const client = new pg.Client({
    connectionString: url,
    application_name: 'mobile-builder-mcp/migrate',
    connectionTimeoutMillis: MIGRATE_CONNECT_TIMEOUT_MS,
    query_timeout: MIGRATE_QUERY_TIMEOUT_MS,
  });
  // A connection lost between queries is reported as an 'error' event; the pending query rejects
  // anyway, so the event must not crash the process.
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const before = await appliedCount(client);
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
    return (await appliedCount(client)) - before;
  } finally {
    await client.end();
  }
}

/** Rows of drizzle's migrations journal (`drizzle.__drizzle_migrations`), 0 before the first migration. */
async function appliedCount(client: pg.Client): Promise<number> {
  const table = await client.query<{ name: string | null }>(
    "SELECT to_regclass('drizzle.__drizzle_migrations')::text AS name",
  );
  if (!table.rows[0]?.name) return 0;
  return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')).rows[0]!.n;
}
