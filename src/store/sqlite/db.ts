/** The drizzle handle the SQLite repositories run their SQL on. */
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type * as schema from './schema.js';

/** The drizzle handle with our schema, and its better-sqlite3 connection (`$client`) for statements drizzle would only slow down. */
export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };
