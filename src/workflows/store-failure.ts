/**
 * A build that failed because a statement of the PostgreSQL store failed (the database restarted,
 * a connection was terminated, a timeout): the driver's message names the SQL, its parameters and
 * the database's address, none of which belongs in a conversation that other users may read on a
 * public project. The engine records a fixed message instead and logs the error for the operator.
 */

/** What a run that failed on a store statement records as its error message. */
export const STORE_FAILURE_MESSAGE =
  'The server lost contact with its database during this workflow. Send the instruction again to retry.';

/**
 * True when `error` is a failed statement of the store: drizzle's query error (it carries the SQL
 * as `query` and `params`), or node-postgres's server error (a five-character SQLSTATE `code` with
 * a `severity`), at the top or as a `cause` (at most four levels down).
 */
export function isStoreFailure(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const fields = e as { query?: unknown; params?: unknown; code?: unknown; severity?: unknown };
    if (typeof fields.query === 'string' && Array.isArray(fields.params)) return true;
    if (typeof fields.code === 'string' && /^[0-9A-Z]{5}$/.test(fields.code) && typeof fields.severity === 'string')
      return true;
  }
  return false;
}
