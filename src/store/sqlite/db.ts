/** The drizzle handle the SQLite repositories run their SQL on. */
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type * as schema from './schema.js';

/** The drizzle handle with our schema. */
export type Db = BetterSQLite3Database<typeof schema>;
