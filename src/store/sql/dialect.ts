/**
 * The dialect seam (docs/architecture.md "The store port"): everything the repositories of
 * `src/store/sql/` need that SQLite and PostgreSQL do differently, as one small interface. Each
 * adapter implements it once (`sqlite/dialect.ts`, `pg/dialect.ts`); the repositories are written
 * once against it, with drizzle's query builder over the adapter's own tables.
 *
 * The repositories are typed against the PostgreSQL schema's tables; at run time they get the
 * adapter's tables (same property names, same row types: `tests/store/row-types.test.ts` and
 * `tests/store/schema-parity.test.ts` check it), so each adapter's SQL is its own dialect's.
 */
import type { Placeholder, SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as releaseSchema from '../pg/release-schema.js';
import type * as schema from '../pg/schema.js';

/** The tables of the store, one drizzle table object per table (the adapter's own schema modules). */
export type Tables = typeof schema & typeof releaseSchema;

/** The drizzle handle the repositories build their statements on: the adapter's, or one transaction's. */
export type Db = PgDatabase<PgQueryResultHKT, Tables>;

/** Named parameters of a statement built with `sql.placeholder(name)`. */
export type Params = Record<string, unknown>;

/** A query builder that runs with the values of its placeholders. */
export interface Executable<R> {
  execute(params?: Params): Promise<R>;
}

/**
 * A statement built once with `sql.placeholder` parameters. SQLite prepares it on first use and
 * runs it synchronously (a hot read costs binding and stepping, never building SQL again);
 * PostgreSQL renders it on each call (one round trip either way).
 */
export interface Statement<R> {
  /** Every row. */
  all(params?: Params): Promise<R[]>;
  /** The first row, undefined when there is none. */
  get(params?: Params): Promise<R | undefined>;
  /** The first column of every row (SQLite builds no row objects for it). */
  pluck(params?: Params): Promise<unknown[]>;
  /** The first column of the first row, undefined when there is none (SQLite builds no row for it). */
  value(params?: Params): Promise<unknown>;
  /** Runs a write. @returns how many rows it changed. */
  run(params?: Params): Promise<number>;
}

/**
 * What differs between the backends, for one drizzle handle (the adapter's, or a transaction's).
 * None of these throws for a missing row; each rejects with the driver's error when the database fails.
 */
export interface Dialect {
  /** Which backend: for the rare statement that cannot be phrased for both (say why where it is used). */
  readonly name: 'sqlite' | 'postgres';
  /** The handle to build statements on. */
  readonly db: Db;
  /** The adapter's tables. */
  readonly t: Tables;
  /** How many rows an awaited INSERT, UPDATE or DELETE (without `returning`) changed. */
  changes(result: unknown): number;
  /** The query with its rows locked until the transaction ends (PostgreSQL `FOR UPDATE`); SQLite: the query (its writer holds the file). */
  forUpdate<Q>(query: Q): Q;
  /** A statement built once from `build` (see `Statement`). */
  statement<R>(build: (db: Db, t: Tables) => Executable<R[]>): Statement<R>;
  /**
   * A statement's query cut to its first row, for `Statement.get`: PostgreSQL `LIMIT 1` (it would
   * send every row); SQLite the query itself (`get` steps only the first row, and a bound `LIMIT ?`
   * under an ORDER BY costs it several times the read).
   */
  first<Q>(query: Q): Q;
  /** Runs raw SQL and returns its rows, column names as written in the SQL. */
  rows<T>(query: SQL): Promise<T[]>;
  /**
   * The next number of the workflows' FIFO order: PostgreSQL takes it from the `seq` identity's
   * sequence (never repeated across nodes); SQLite takes `max + 1` (one writer at a time).
   */
  nextWorkflowSeq(): Promise<number>;
  /** True for a unique-constraint failure, of the index named `index` when given. */
  isUniqueViolation(error: unknown, index?: string): boolean;
  /**
   * Runs `fn` so that a statement of it failing on a constraint leaves the enclosing transaction
   * usable: PostgreSQL, inside a transaction, under a SAVEPOINT (a failed statement aborts the
   * whole transaction there); SQLite undoes only the failed statement, so it runs `fn` as it is.
   */
  savepoint<T>(fn: (d: Dialect) => Promise<T>): Promise<T>;
  /**
   * The end of a subquery that locks the rows it selects, skipping rows another transaction holds
   * (PostgreSQL `FOR UPDATE SKIP LOCKED`); empty on SQLite (one writer at a time).
   */
  readonly skipLocked: SQL;
  /**
   * An ORDER BY term for "inserted later first" among rows that tie: SQLite's `rowid`; PostgreSQL
   * keeps no insertion order, so the table's `id` column, descending.
   */
  laterFirst(id: AnyPgColumn): SQL;
  /**
   * A subquery of the strings of `list`, a parameter bound to a JSON array of strings as text
   * (`'["a","b"]'`), for `column in (…)`: SQLite `json_each`, PostgreSQL
   * `json_array_elements_text`. One parameter for the whole list keeps a statement built once,
   * whatever the list's length.
   */
  jsonTexts(list: Placeholder): SQL;
}
