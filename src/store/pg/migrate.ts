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

/**
 * Applies every pending migration of `drizzle-pg/` on one dedicated connection that holds
 * `pg_advisory_lock(MIGRATION_LOCK_KEY)` for the whole run: concurrent callers (four nodes starting
 * at once) wait in turn, and each one after the first finds nothing left to apply. The lock is
 * released when the connection closes, even if a migration fails.
 * @param url a `postgres://` or `postgresql://` connection string
 * @throws the driver's error when the database cannot be reached or a migration fails (that
 *   migration's transaction is rolled back).
 */
export async function migratePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: 'mobile-builder-mcp/migrate' });
  // A connection lost between queries is reported as an 'error' event; the pending query rejects
  // anyway, so the event must not crash the process.
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await client.end();
  }
}
