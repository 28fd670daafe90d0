/** The drizzle handle the PostgreSQL repositories run their SQL on: the pool's, or one transaction's. */
import type { NodePgDatabase, NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import type { PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type * as schema from './schema.js';

/** The drizzle handle with our schema: the pool's (auto-commit statements) or a transaction's. */
export type PgDb =
  | NodePgDatabase<typeof schema>
  | PgTransaction<NodePgQueryResultHKT, typeof schema, ExtractTablesWithRelations<typeof schema>>;
