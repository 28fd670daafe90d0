/**
 * The SQLite side of the dialect seam (`sql/dialect.ts`): better-sqlite3 under drizzle, one
 * connection, one writer at a time (`BEGIN IMMEDIATE`), statements that answer synchronously.
 */
import { Column, is, noopDecoder, Param, Placeholder, SQL, sql, Subquery } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { Db as SqlDb, Dialect, Executable, Params, Statement, Tables } from '../sql/dialect.js';
import type { Db } from './db.js';
import * as releaseSchema from './release-schema.js';
import * as schema from './schema.js';

/** Both schema modules' tables. */
const tables = { ...schema, ...releaseSchema };

/** A drizzle SQLite prepared query, as `statement` uses it (its fields are drizzle's, read by `rowMapper`). */
interface Prepared<R> {
  all(params?: Params): R[];
  get(params?: Params): R | undefined;
  run(params?: Params): Database.RunResult;
  readonly stmt?: Database.Statement;
  readonly query?: { params: unknown[] };
  readonly fields?: { path: string[]; field: unknown }[];
  readonly customResultMapper?: unknown;
}

/** How a column's raw value becomes the row's: absent for a value taken as it is. */
type Decode = ((value: unknown) => unknown) | undefined;

/** A field's decoder (drizzle's `DriverValueDecoder`; an SQL's is not in its public type). */
interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** The decoder of a selected field, as drizzle's `mapResultRow` finds it. */
function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field;
  const sqlOf = is(field, SQL)
    ? field
    : is(field, Subquery)
      ? (field as unknown as { _: { sql: SQL } })._.sql
      : (field as { sql: SQL }).sql;
  return (sqlOf as unknown as { decoder: Decoder }).decoder;
}

/**
 * The rows of a drizzle prepared query without drizzle's `mapResultRow`, which finds every field's
 * decoder and walks its path again for each value of each row (most of a wide page's read): one
 * mapper per statement, its keys and decoders found once, over better-sqlite3's raw rows (arrays).
 * Only for a flat select (one key per column, no joined table to null): undefined for any other
 * query, which keeps drizzle's own mapping.
 */
function rowMapper<R>(prepared: Prepared<R>): { stmt: Database.Statement; map: (row: unknown[]) => R } | undefined {
  const { stmt, query, fields, customResultMapper } = prepared;
  // A joined table's columns have two-level paths (drizzle nulls the object of an outer join's miss).
  if (!stmt?.reader || !query || !fields || customResultMapper || fields.some((f) => f.path.length !== 1))
    return undefined;
  const keys = fields.map((f) => f.path[0]!);
  const identity = [Column.prototype.mapFromDriverValue, noopDecoder.mapFromDriverValue];
  const decoders: Decode[] = fields.map(({ field }) => {
    const decoder = decoderOf(field);
    return identity.includes(decoder.mapFromDriverValue) ? undefined : (v) => decoder.mapFromDriverValue(v);
  });
  const n = keys.length;
  return {
    // Drizzle's own reads of this statement turn raw mode on too (`values`, `get`).
    stmt: stmt.raw(true),
    map: (row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const value = row[i];
        const decode = decoders[i];
        out[keys[i]!] = value === null || decode === undefined ? value : decode(value);
      }
      return out as R;
    },
  };
}

/** One parameter of a prepared query: a placeholder's name (with its column's encoder), or a value bound as it is. */
type Slot = { name: string; encode?: (value: unknown) => unknown } | { value: unknown };

/**
 * drizzle's `fillPlaceholders` for one statement, each parameter's kind found once (drizzle finds it
 * again with two or three `is` checks per parameter per run): the values to bind for `values`.
 * @throws Error when a placeholder has no value, as drizzle does.
 */
function binder(params: readonly unknown[]): (values: Params | undefined) => unknown[] {
  const slots: Slot[] = params.map((p) => {
    if (is(p, Placeholder)) return { name: p.name };
    if (is(p, Param) && is(p.value, Placeholder)) {
      const { encoder } = p;
      return { name: p.value.name, encode: (value: unknown) => encoder.mapToDriverValue(value) };
    }
    return { value: p };
  });
  return (values = {}) =>
    slots.map((slot) => {
      if ('value' in slot) return slot.value;
      if (!(slot.name in values)) throw new Error(`No value for placeholder "${slot.name}" was provided`);
      const value = values[slot.name];
      return slot.encode ? slot.encode(value) : value;
    });
}

/** The SQLite dialect over `db` (the store's one handle: transactions run on it too). */
export function sqliteDialect(db: Db): Dialect {
  const handle = db as unknown as SqlDb;
  let maxSeq: Database.Statement | undefined;
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
      let mapped: ReturnType<typeof rowMapper<R>> | null = null;
      let bind: ReturnType<typeof binder> | undefined;
      let plucked: { statement: Database.Statement; bind: ReturnType<typeof binder> } | undefined;
      const p = () => (prepared ??= (build(handle, dialect.t) as unknown as { prepare(): Prepared<R> }).prepare());
      // The statement's own mapper (`rowMapper`), found on the first read; undefined: drizzle's.
      const m = () => (mapped === null ? (mapped = rowMapper(p())) : mapped);
      const b = () => (bind ??= binder(p().query!.params));
      // The first column as plain values (better-sqlite3's `pluck`): no row objects, no arrays.
      const plucking = () => {
        if (plucked) return plucked;
        const query = (build(handle, dialect.t) as unknown as { toSQL(): { sql: string; params: unknown[] } }).toSQL();
        return (plucked = { statement: db.$client.prepare(query.sql).pluck(), bind: binder(query.params) });
      };
      return {
        all: async (params) => {
          const fast = m();
          if (!fast) return p().all(params);
          const rows = fast.stmt.all(...b()(params)) as unknown[][];
          return rows.map(fast.map);
        },
        get: async (params) => {
          const fast = m();
          if (!fast) return p().get(params);
          const row = fast.stmt.get(...b()(params)) as unknown[] | undefined;
          return row === undefined ? undefined : fast.map(row);
        },
        // A write's statement as drizzle prepared it (no logger on the store's handle), its values bound by `binder`.
        run: async (params) => {
          const { stmt } = p();
          return stmt ? stmt.run(...b()(params)).changes : p().run(params).changes;
        },
        pluck: async (params) => {
          const { statement, bind: bound } = plucking();
          return statement.all(...bound(params));
        },
        value: async (params) => {
          const { statement, bind: bound } = plucking();
          return statement.get(...bound(params));
        },
      };
    },
    rows: async <T>(query: SQL) => db.all<T>(query),
    async nextWorkflowSeq() {
      // Prepared once: every send takes one (built and compiled on each call, it was 4 % of a send's CPU in a profile).
      maxSeq ??= db.$client.prepare('select max(seq) from workflows').pluck();
      return ((maxSeq.get() as number | null) ?? 0) + 1;
    },
    isUniqueViolation(error, index) {
      const e = error as { code?: unknown; message?: unknown } | null;
      if (!e || typeof e !== 'object' || e.code !== 'SQLITE_CONSTRAINT_UNIQUE') return false;
      return index === undefined || String(e.message).includes(index);
    },
    savepoint: (fn) => fn(dialect),
    skipLocked: sql``,
    laterFirst: () => sql`rowid desc`,
    jsonTexts: (list) => sql`select value from json_each(${list})`,
  };
  return dialect;
}
