/**
 * Raw access to the SQLite store behind the port, for tests that arrange or inspect rows directly
 * (a failure injected by SQL, a count): the app itself reaches the database only through the port.
 */
import type Database from 'better-sqlite3';
import type { Store } from '../src/store/store.js';
import type { Db } from '../src/store/sqlite/db.js';
import { SqliteStore } from '../src/store/sqlite/open.js';

function sqliteStore(store: Store): SqliteStore {
  if (!(store instanceof SqliteStore)) throw new Error(`not a SQLite store: ${store.dialect}`);
  return store;
}

/** The better-sqlite3 connection of a SQLite store. @throws for another kind of store. */
export function sqliteOf(store: Store): Database.Database {
  return sqliteStore(store).sqlite;
}

/** The drizzle handle of a SQLite store. @throws for another kind of store. */
export function dbOf(store: Store): Db {
  return sqliteStore(store).db;
}
