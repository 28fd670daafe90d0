/**
 * The PostgreSQL side of the dialect seam (`sql/dialect.ts`): node-postgres under drizzle, several
 * nodes on one database, READ COMMITTED transactions with row locks.
 */
import { is, sql, type SQL } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Db, Dialect, Executable, Statement, Tables } from '../sql/dialect.js';
import type { PgDb } from './db.js';
import { isUniqueViolation } from './pg-errors.js';
import * as releaseSchema from './release-schema.js';
import * as schema from './schema.js';

/** Both schema modules' tables. */
const tables: Tables = { ...schema, ...releaseSchema };

/** The PostgreSQL dialect over `db`: the pool's handle (auto-commit statements) or a transaction's. */
export function pgDialect(db: PgDb): Dialect {
  const handle = db as unknown as Db;
  const dialect: Dialect = {
    name: 'postgres',
    db: handle,
    t: tables,
    changes: (result) => (result as { rowCount: number | null }).rowCount ?? 0,
    forUpdate: (query) => (query as unknown as { for(strength: 'update'): unknown }).for('update') as typeof query,
    first: (query) => (query as unknown as { limit(n: number): unknown }).limit(1) as typeof query,
    statement<R>(build: (db: Db, t: Tables) => Executable<R[]>): Statement<R> {
      let query: Executable<R[]> | undefined;
      const q = () => (query ??= build(handle, tables));
      return {
        all: (params) => q().execute(params),
        get: async (params) => (await q().execute(params))[0],
        pluck: async (params) => (await q().execute(params)).map((row) => Object.values(row as object)[0]),
        value: async (params) => {
          const row = (await q().execute(params))[0];
          return row === undefined ? undefined : Object.values(row as object)[0];
        },
        run: async (params) => dialect.changes(await (q() as unknown as Executable<unknown>).execute(params)),
      };
    },
    rows: async <T>(query: SQL) => (await db.execute(query)).rows as T[],
    async nextWorkflowSeq() {
      const rows = await dialect.rows<{ n: string }>(
        sql`select nextval(pg_get_serial_sequence('workflows', 'seq')) as n`,
      );
      return Number(rows[0]!.n);
    },
    isUniqueViolation,
    async savepoint(fn) {
      if (!is(db as object, PgTransaction)) return fn(dialect);
      // drizzle runs a transaction opened inside a transaction as a SAVEPOINT.
      return (db as NodePgDatabase<typeof schema>).transaction((inner) => fn(pgDialect(inner)));
    },
    skipLocked: sql`for update skip locked`,
    laterFirst: (id) => sql`${id} desc`,
    jsonTexts: (list) => sql`select json_array_elements_text(cast(${list} as json))`,
  };
  return dialect;
}
