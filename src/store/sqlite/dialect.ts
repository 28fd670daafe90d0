/**
 * The SQLite side of the dialect seam (`sql/dialect.ts`): better-sqlite3 under drizzle, one
 * connection, one writer at a time (`BEGIN IMMEDIATE`), statements that answer synchronously.
 */
import { fillPlaceholders, sql, type SQL } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { Db as SqlDb, Dialect, Executable, Params, Statement, Tables } from '../sql/dialect.js';
import type { Db } from './db.js';
import * as releaseSchema from './release-schema.js';
import * as schema from './schema.js';

/** Both schema modules' tables. */
const tables = { ...schema, ...releaseSchema };

/** A drizzle SQLite prepared query, as `statement` uses it. */
interface Prepared<R> {
  all(params?: Params): R[];
  get(params?: Params): R | undefined;
  run(params?: Params): Database.RunResult;
}

/** The SQLite dialect over `db` (the store's one handle: transactions run on it too). */
export function sqliteDialect(db: Db): Dialect {
  const handle = db as unknown as SqlDb;
  const dialect: Dialect = {
    name: 'sqlite',
    db: handle,
    // The same property names and row types as the PostgreSQL tables (`sql/dialect.ts`).
    t: tables as unknown as Tables,
    changes: (result) => (result as Database.RunResult).changes,
    forUpdate: (query) => query,
    first: (query) => query,
    statement<R>(build: (db: SqlDb, t: Tables) => Executable<R[]>): Statement<R> {
      let prepared: Prepared<R> | undefined;
      let plucked: { statement: Database.Statement; params: unknown[] } | undefined;
      const p = () => (prepared ??= (build(handle, dialect.t) as unknown as { prepare(): Prepared<R> }).prepare());
      // The first column as plain values (better-sqlite3's `pluck`): no row objects, no arrays.
      const plucking = () => {
        if (plucked) return plucked;
        const query = (build(handle, dialect.t) as unknown as { toSQL(): { sql: string; params: unknown[] } }).toSQL();
        return (plucked = { statement: db.$client.prepare(query.sql).pluck(), params: query.params });
      };
      return {
        all: async (params) => p().all(params),
        get: async (params) => p().get(params),
        run: async (params) => p().run(params).changes,
        pluck: async (params) => {
          const { statement, params: bound } = plucking();
          return statement.all(...fillPlaceholders(bound, params ?? {}));
        },
      };
    },
    rows: async <T>(query: SQL) => db.all<T>(query),
    async nextWorkflowSeq() {
      const row = db.get<{ m: number | null }>(sql`select max(seq) as m from workflows`);
      return (row?.m ?? 0) + 1;
    },
    isUniqueViolation(error, index) {
      const e = error as { code?: unknown; message?: unknown } | null;
      if (!e || typeof e !== 'object' || e.code !== 'SQLITE_CONSTRAINT_UNIQUE') return false;
      return index === undefined || String(e.message).includes(index);
    },
    savepoint: (fn) => fn(dialect),
    skipLocked: sql``,
    laterFirst: () => sql`rowid desc`,
  };
  return dialect;
}
