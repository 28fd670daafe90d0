/**
 * A failed tool call as the console shows it (docs/contract.md#web-console): the JSON-RPC code,
 * the exact message, the listed issues, and the HTTP status of the error table.
 */
import { httpStatusForCode, toJsonRpcError } from '../errors.js';
import type { ShownError } from './pages.js';

/** A failed tool call, as the console shows it. */
export function shown(error: unknown): { status: number; error: ShownError; retryAfter?: number } {
  const body = toJsonRpcError(error);
  const data = (body.data ?? {}) as { issues?: { parameter: string; problem: string }[]; retryAfterSeconds?: number; hint?: string; reason?: string; scope?: string };
  const issues = data.issues?.map((i) => `${i.parameter} ${i.problem}`);
  const detail = data.reason ? `reason: ${data.reason}` : data.scope ? `scope: ${data.scope}${data.retryAfterSeconds ? `, retry after ${data.retryAfterSeconds} s` : ''}` : undefined;
  return {
    status: httpStatusForCode(body.code),
    error: { code: body.code, message: body.message, ...(issues && issues.length > 1 && { issues }), ...((data.hint ?? detail) !== undefined && { hint: data.hint ?? detail }) },
    ...(data.retryAfterSeconds !== undefined && { retryAfter: data.retryAfterSeconds }),
  };
}
