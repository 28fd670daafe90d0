/** Recognising PostgreSQL's errors by SQLSTATE, whether node-postgres's own or wrapped by drizzle (`cause`). */

/** The SQLSTATE of `error` or of the error it wraps; undefined when it has none. */
function sqlState(error: unknown): string | undefined {
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** True for a unique violation (23505), of the constraint or index `constraint` when given. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  if (constraint === undefined) return true;
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if ((e as { constraint?: unknown }).constraint === constraint) return true;
  }
  return false;
}

/** True for a failure that a transaction may be retried after: serialization failure (40001) or deadlock (40P01). */
export function isRetryable(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40001' || state === '40P01';
}
