/**
 * A failed tool call as the console shows it (docs/contract.md#web-console): the JSON-RPC code,
 * the exact message, the listed issues, and the HTTP status of the error table.
 */
import { httpStatusForCode, STORE_UNAVAILABLE_DATA, toJsonRpcError } from '../errors.js';
import { STORE_RETRY_AFTER_SECONDS } from '../store/unavailable.js';
import type { ShownError } from './pages.js';

/** What a person reads for each `-32004` `data` (docs/contract.md#errors). */
const NOT_FOUND: Record<string, string> = {
  'project/unknown id': 'No project has this id: it may have been deleted, or the link is mistyped.',
  'workflow/unknown id': 'This project has no such workflow: it may have finished and been replaced. Reload the page.',
  'workflow/none active': 'Nothing to cancel: no workflow of this project is running.',
  'page/unknown path': 'No console page has this address.',
};

/** A failed tool call, as the console shows it; `fields` names the parameters of `data.issues` (the form fields to mark). */
export function shown(error: unknown): { status: number; error: ShownError; retryAfter?: number } {
  const body = toJsonRpcError(error);
  const data = (body.data ?? {}) as {
    issues?: { parameter: string; problem: string }[];
    retryAfterSeconds?: number;
    hint?: string;
    reason?: string;
    scope?: string;
    resource?: string;
  };
  const issues = data.issues?.map((i) => `${i.parameter} ${i.problem}`);
  const fields = data.issues ? [...new Set(data.issues.map((i) => i.parameter.split(/[.[]/)[0]!))] : undefined;
  let detail: string | undefined;
  if (data.resource) detail = NOT_FOUND[`${data.resource}/${data.reason}`];
  else if (data.reason) detail = `reason: ${data.reason}`;
  else if (data.scope)
    detail = `scope: ${data.scope}${data.retryAfterSeconds ? `, retry after ${data.retryAfterSeconds} s` : ''}`;
  // The store cannot answer now (an outage): 503 with `Retry-After`, as every HTTP route answers then.
  const unavailable = data.reason === STORE_UNAVAILABLE_DATA.reason;
  if (unavailable) detail = 'The server cannot reach its database right now. Try again in a moment.';
  return {
    status: unavailable ? 503 : httpStatusForCode(body.code),
    error: {
      code: body.code,
      message: body.message,
      ...(issues && issues.length > 1 && { issues }),
      ...(fields && fields.length > 0 && { fields }),
      ...((data.hint ?? detail) !== undefined && { hint: data.hint ?? detail }),
    },
    ...(data.retryAfterSeconds !== undefined && { retryAfter: data.retryAfterSeconds }),
    ...(unavailable && { retryAfter: STORE_RETRY_AFTER_SECONDS }),
  };
}
