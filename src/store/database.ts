/**
 * Opening the SQLite store: better-sqlite3 with WAL, foreign keys and a busy timeout, wrapped
 * by drizzle, with the shipped migrations of `drizzle/` applied (docs/architecture.md).
 */
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as schema from './schema.js';

/** The drizzle handle with our schema. */
export type Db = BetterSQLite3Database<typeof schema>;

/** The store: the drizzle handle plus the raw connection (for pragmas, backups and closing). */
export interface Store {
  db: Db;
  sqlite: Database.Database;
  /**
   * Runs `fn` in a write transaction taken at once (`BEGIN IMMEDIATE`), so that a check and the
   * write that depends on it cannot interleave with another connection's. `fn` must be
   * synchronous: better-sqlite3 does not roll back across an `await`. Nested calls become
   * savepoints. Rolls back and rethrows whatever `fn` throws.
   */
  immediate<T>(fn: () => T): T;
  /** SQLite's `PRAGMA data_version`: changes when another connection has committed to the file. */
  dataVersion(): number;
  close(): void;
}

/** Folder of the shipped migrations: `<package>/drizzle`, both from `src/` and from `dist/`. */
const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'drizzle');

/**
 * Opens (creating if needed) the database at `file` (`:memory:` for a private in-memory one)
 * and applies every pending migration.
 * @throws if the file cannot be opened or a migration fails.
 */
export function openStore(file: string, options: { migrate?: boolean } = {}): Store {
  const sqlite = new Database(file);
  if (file !== ':memory:') sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  const db = drizzle(sqlite, { schema });
  if (options.migrate !== false) migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  return {
    db,
    sqlite,
    immediate: <T>(fn: () => T): T => sqlite.transaction(fn).immediate(),
    dataVersion: () => dataVersion.get() as number,
    close: () => {
      if (sqlite.open) sqlite.close();
    },
  };
}
