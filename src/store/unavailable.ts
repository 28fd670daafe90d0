/**
 * Recognising a store that cannot answer now (docs/operators.md, "When PostgreSQL restarts"): the
 * database is restarting, stopped, frozen or unreachable. Such a failure is the server's, not the
 * caller's, and retrying a little later succeeds: tool calls answer -32603 with
 * `data: { reason: "store_unavailable", retryable: true }`, HTTP routes answer 503 with
 * `Retry-After`.
 */

/** Seconds an HTTP client is told to wait (`Retry-After`) before it retries during an outage. */
export const STORE_RETRY_AFTER_SECONDS = 1;

/**
 * SQLSTATE classes and codes meaning "the database cannot serve now": 08 connection exceptions,
 * 57P01-57P05 (shutdown, crash shutdown, cannot connect now, database dropped, idle session
 * timeout), 57014 (a statement cancelled by `statement_timeout`), 53300 (too many connections).
 */
const UNAVAILABLE_STATES = /^(08...|57P0[1-5]|57014|53300)$/;

/** Socket errors of a database that cannot be reached. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * node-postgres's and pg-pool's own messages for a lost or unreachable server (they carry no code):
 * a connection ended under a statement, a connect or checkout past `connectionTimeoutMillis`, a
 * statement past `query_timeout`, a client whose connection failed before.
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Query read timeout$/,
  /not queryable/,
  /^Client was closed and is not queryable/,
];

/**
 * The driver's own words for an outage, for one log line: the message of the innermost error that
 * says the store cannot answer (`connect ECONNREFUSED 127.0.0.1:5432`, `Query read timeout`...),
 * never the SQL or the parameters drizzle's wrapper carries. Undefined when `error` is no outage.
 * @param error anything thrown by a store call
 */
export function storeUnavailableReason(error: unknown): string | undefined {
  let reason: string | undefined;
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isStoreUnavailable({ code: (e as { code?: unknown }).code, message: (e as { message?: unknown }).message }))
      reason = String((e as { message?: unknown }).message);
  }
  return reason;
}

/**
 * True when `error` (or an error it wraps as `cause`, up to four levels, as drizzle wraps the
 * driver's) says the store is unreachable or not answering, rather than that a statement is wrong.
 * @param error anything thrown by a store call
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_STATES.test(code) || SOCKET_CODES.has(code))) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}
