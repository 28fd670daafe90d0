/**
 * The JSON-RPC 2.0 envelope as `JsonRpcGateway` handles it (docs/contract.md#errors): the checks of
 * an incoming message's envelope (-32600 `Invalid Request`) and of its `params` shape (-32602), and
 * the reply envelopes (a result; an error, kept inside the error table; none, for a notification),
 * each with the HTTP status of the error table and the rate window the request was counted in.
 *
 * The builders make the very objects an inline literal would (no extra allocation). The checks
 * themselves live in `jsonrpc-envelope.ts`, which a stdio start's early answer runs too.
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import {
  ERROR_TABLE,
  httpStatusForCode,
  invalidParameter,
  invalidRequest,
  isExpectedError,
  MESSAGES,
  ServiceError,
  toJsonRpcError,
} from '../errors.js';
import type { RateDecision } from '../limits/request-rate-limiter.js';
import type { Logger } from '../logger.js';
import { storeUnavailableReason } from '../store/unavailable.js';
import type { JsonRpcReply } from './in-process-transport.js';
import type { RequestChannel } from './request-channel.js';
import { envelopeProblem, paramsProblem, validId } from './jsonrpc-envelope.js';

/** What to send back: the body (null for a notification or a client response) and its HTTP status. */
export interface GatewayReply {
  body: JsonRpcReply | null;
  status: number;
  /** The rate window the request was counted in, when it was (for `X-RateLimit-*` headers). */
  rate?: RateDecision;
}

/** The error codes of the error table (docs/contract.md#errors); any other code is replaced. */
const KNOWN_CODES = new Set(Object.values(ERROR_TABLE).map((e) => e.code));

/**
 * The -32600 reply to a parsed message whose envelope is not a JSON-RPC 2.0 request, notification
 * or response (`envelopeProblem` of `jsonrpc-envelope.ts`, which says what is checked); undefined
 * when the envelope is well formed (a client response included): no allocation.
 * @param value the parsed message (any JSON value).
 */
export function envelopeRefusal(value: unknown): GatewayReply | undefined {
  const problem = envelopeProblem(value);
  if (!problem) return undefined;
  return errorReply(problem.id, invalidRequest(problem.reason === undefined ? undefined : { reason: problem.reason }));
}

/**
 * The message's `params`: an object, or undefined when absent.
 * @throws ServiceError -32602 (`params` "must be an object") when present and not an object.
 */
export function checkedParams(message: Record<string, unknown>): Record<string, unknown> | undefined {
  if (paramsProblem(message)) throw invalidParameter('params', 'must be an object');
  return message.params as Record<string, unknown> | undefined;
}

/** The HTTP 200 reply that answers `id` with `result`, and the rate window that counted it, if one did. */
export function resultReply(id: RequestId | null, result: unknown, rate: RateDecision | undefined): GatewayReply {
  return { body: { jsonrpc: '2.0', id, result }, status: 200, ...(rate && { rate }) };
}

/** The reply that answers `id` with `error`, and the rate window that counted it, if one did. */
export function errorReply(id: RequestId | null, error: ServiceError, rate?: RateDecision): GatewayReply {
  const body = toJsonRpcError(error);
  return { body: { jsonrpc: '2.0', id, error: body }, status: httpStatusForCode(body.code), ...(rate && { rate }) };
}

/**
 * The reply to a message not answered within its deadline: -32603 `Internal error` with
 * `data.reason = "deadline_exceeded"` and `data.deadlineMs`, to the message's id when it has a
 * valid one (else null).
 * @param value the parsed message (any JSON value).
 * @param deadlineMs the deadline it missed, in ms.
 */
export function deadlineReply(value: unknown, deadlineMs: number): GatewayReply {
  const id =
    value && typeof value === 'object' && validId((value as { id?: unknown }).id)
      ? (value as { id: RequestId }).id
      : null;
  return errorReply(id, new ServiceError('internal', MESSAGES.internal, { reason: 'deadline_exceeded', deadlineMs }));
}

/**
 * The reply to a request whose handling threw `error` (any value): its JSON-RPC error and HTTP
 * status (`toJsonRpcError`). Logs it: a store outage as one short warning (without the SQL and its
 * parameters), an error the contract does not expect with its stack; an expected one not at all.
 */
export function failureReply(
  id: RequestId | null,
  error: unknown,
  rate: RateDecision | undefined,
  logger: Logger,
): GatewayReply {
  // An outage fails every request: one short line each, without the SQL and its parameters.
  const outage = storeUnavailableReason(error);
  if (outage !== undefined) logger.warn({ reason: outage }, 'request failed: the database cannot answer now');
  else if (!isExpectedError(error)) logger.error({ err: error }, 'message handling failed');
  const body = toJsonRpcError(error);
  return { body: { jsonrpc: '2.0', id, error: body }, status: httpStatusForCode(body.code), ...(rate && { rate }) };
}

/**
 * An SDK server's `reply` as the gateway sends it: a result with status 200; an error kept inside
 * the error table (docs/contract.md#errors): a code outside it, or -32603 with other words than
 * `Internal error`, becomes a plain -32603 `Internal error` (no stack, no SDK wording; logged).
 */
export function boundedReply(reply: JsonRpcReply, rate: RateDecision | undefined, logger: Logger): GatewayReply {
  if (!reply.error) return { body: reply, status: 200, ...(rate && { rate }) };
  let error = reply.error;
  if (
    !KNOWN_CODES.has(error.code) ||
    (error.code === ERROR_TABLE.internal.code && error.message !== MESSAGES.internal)
  ) {
    logger.error({ error }, 'unexpected protocol error replaced by Internal error');
    error = { code: ERROR_TABLE.internal.code, message: MESSAGES.internal };
  }
  return { body: { ...reply, error }, status: httpStatusForCode(error.code), ...(rate && { rate }) };
}

/**
 * The answer to an admitted notification: none (202, with the rate window that counted it). A
 * `notifications/cancelled` naming a valid `requestId` cancels that request on the channel.
 */
export function notified(
  method: string,
  params: Record<string, unknown> | undefined,
  channel: RequestChannel | undefined,
  rate: RateDecision | undefined,
): GatewayReply {
  if (method === 'notifications/cancelled' && params && validId(params.requestId))
    channel?.cancel?.(params.requestId as RequestId);
  return { body: null, status: 202, ...(rate && { rate }) };
}

/**
 * `then` for a step that answers at once when it can: `done` of what `step` gave, at once when it
 * gave a value (no promise), else a promise of it; `failed` of what it threw or rejected with.
 */
export function whenSettled<T, R>(
  step: () => T | Promise<T>,
  done: (value: T) => R,
  failed: (error: unknown) => R,
): R | Promise<R> {
  let value: T | Promise<T>;
  try {
    value = step();
  } catch (error) {
    return failed(error);
  }
  return value instanceof Promise ? value.then(done, failed) : done(value);
}
