/**
 * Statements of a SQLite repository prepared once, on first use: a hot read then costs binding its
 * parameters and stepping it, never building its SQL with drizzle and compiling it again. Prepared
 * lazily, so that opening a store (every start) compiles nothing it does not run.
 */

/**
 * `prepare`'s result, built by the first call and returned by every later one.
 * @param prepare builds the statements (drizzle `.prepare()` with `sql.placeholder` parameters);
 *   it runs when the schema exists (the store applies its migrations first).
 */
export function preparedOnce<T>(prepare: () => T): () => T {
  let statements: T | undefined;
  return () => (statements ??= prepare());
}
