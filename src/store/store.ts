/**
 * The store port (docs/architecture.md "The store port"): everything above `src/store/` reaches the
 * database through this interface, every call asynchronous, so that a second backend is one more
 * adapter folder beside `sqlite/`. Services, the journal, the engine, OAuth, the console and the
 * limits are written once against it.
 *
 * - `store.repos`: reads and single-statement writes, each its own auto-commit.
 * - `store.transaction(async tx => …)`: one write transaction; `tx` has the same repositories.
 * - `tx.publish(event)`: a change notice, delivered to `store.events` after COMMIT, never on rollback.
 */
import type { StoreConfig, Store } from './port.js';
import { openSqliteStore } from './sqlite/open.js';

export { TransactionSpanError } from './port.js';
export type { RateWindows, SharedLook, Store, StoreConfig, Tx } from './port.js';

/**
 * Opens (creating and migrating) the store named by `config`: the PostgreSQL database of
 * `config.databaseUrl` when it is set (docs/postgresql.md), else the SQLite file `config.file`.
 * @throws Error for a `databaseUrl` that is not `postgres://` or `postgresql://`; the driver's
 *   error if the database cannot be opened or reached, or a migration fails.
 */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.databaseUrl) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(config.databaseUrl)?.[1]?.toLowerCase();
    if (scheme !== 'postgres' && scheme !== 'postgresql') {
      throw new Error(
        `The database URL must start with postgres:// or postgresql:// (got ${scheme ? `${scheme}://…` : 'no scheme'})`,
      );
    }
    // Loaded on demand: a SQLite start (every stdio launch) never evaluates the PostgreSQL driver.
    const { openPgStore } = await import('./pg/open.js');
    return openPgStore({ ...config, databaseUrl: config.databaseUrl });
  }
  return openSqliteStore(config);
}

/**
 * Applies the pending PostgreSQL migrations of `drizzle-pg/` to the database at `url`, under an
 * advisory lock so that nodes starting together take turns (docs/postgresql.md#migrations).
 * @returns how many migrations were applied (0: the database was up to date).
 * @throws the driver's error when the database cannot be reached or a migration fails.
 */
export async function migratePostgresDatabase(url: string): Promise<number> {
  const { migratePostgres } = await import('./pg/migrate.js');
  return migratePostgres(url);
}
