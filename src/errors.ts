/**
 * Domain errors and their one mapping to JSON-RPC error objects and HTTP statuses
 * (docs/contract.md#errors). Services throw `ServiceError`s; only the tool adapter and
 * the transports turn them into wire errors.
 */
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from './store/unavailable.js';

/** The kinds of failure a caller can see. Each maps to one row of the error table (docs/contract.md#errors). */
export type ServiceErrorKind =
  | 'parse_error'
  | 'invalid_request'
  | 'method_not_found'
  | 'invalid_params'
  | 'internal'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited';

/** Extra context carried in `error.data`; never contains another user's data, a token or SQL. */
export type ErrorData = Record<string, unknown>;

/** What a -32004 did not find: every `Resource not found` carries it as `error.data`. */
export interface NotFoundData {
  resource: 'project' | 'workflow' | 'page' | 'thumbnail';
  reason: 'unknown id' | 'none active' | 'unknown path' | 'none taken';
}

/** A failure with a kind, an exact caller-facing message and optional `error.data`. */
export class ServiceError extends Error {
  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
    readonly data?: ErrorData,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** JSON-RPC code and HTTP status of each kind (docs/contract.md#errors). */
export const ERROR_TABLE: Record<ServiceErrorKind, { code: number; httpStatus: number }> = {
  parse_error: { code: -32700, httpStatus: 400 },
  invalid_request: { code: -32600, httpStatus: 400 },
  method_not_found: { code: -32601, httpStatus: 404 },
  invalid_params: { code: -32602, httpStatus: 400 },
  internal: { code: -32603, httpStatus: 500 },
  unauthenticated: { code: -32001, httpStatus: 401 },
  forbidden: { code: -32003, httpStatus: 403 },
  not_found: { code: -32004, httpStatus: 404 },
  rate_limited: { code: -32005, httpStatus: 429 },
};

const HTTP_STATUS_BY_CODE = new Map<number, number>(
  Object.values(ERROR_TABLE).map(({ code, httpStatus }) => [code, httpStatus]),
);

/** HTTP status for a JSON-RPC error code; unknown codes are treated as internal errors (500). */
export function httpStatusForCode(code: number): number {
  return HTTP_STATUS_BY_CODE.get(code) ?? 500;
}

/** The exact messages of docs/contract.md#errors. */
export const MESSAGES = {
  parse: 'Parse error',
  invalidRequest: 'Invalid request',
  internal: 'Internal error',
  unauthenticated: 'Authentication failed - invalid or expired API key',
  forbidden: 'Access denied - you do not have permission for this resource',
  notFound: 'Resource not found',
  rateLimited: 'Rate limit exceeded - please slow down requests',
} as const;

/** Constructors for each row of the error table (docs/contract.md#errors), with the exact messages. */
export const parseError = (): ServiceError => new ServiceError('parse_error', MESSAGES.parse);
export const invalidRequest = (data?: ErrorData): ServiceError =>
  new ServiceError('invalid_request', MESSAGES.invalidRequest, data);
export const methodNotFound = (method: string): ServiceError =>
  new ServiceError('method_not_found', `Method not found: ${method}`);
export const toolNotFound = (name: string): ServiceError =>
  new ServiceError('method_not_found', `Tool not found: ${name}`);
export const missingParameter = (name: string, data?: ErrorData): ServiceError =>
  new ServiceError('invalid_params', `Missing required parameter: ${name}`, data);
export const invalidParameter = (name: string, reason: string, data?: ErrorData): ServiceError =>
  new ServiceError('invalid_params', `Invalid parameter: ${name} ${reason}`, data);
/**
 * What `data.hint` of every token refusal says: the MCP SDK's client uses the same code for its own
 * timeout (`Request timed out`), which a model must not take for a token problem.
 */
export const UNAUTHENTICATED_HINT =
  'Check the message: this one ("Authentication failed") means the API token is missing, invalid, expired or revoked; configure a valid token (mobile-builder-mcp token create). A -32001 "Request timed out" is the MCP client\'s own timeout, not a token problem: call again.';
/** -32001 `Authentication failed - invalid or expired API key`, with `data.hint` (`UNAUTHENTICATED_HINT`). */
export const unauthenticated = (): ServiceError =>
  new ServiceError('unauthenticated', MESSAGES.unauthenticated, { hint: UNAUTHENTICATED_HINT });
export const forbidden = (data?: ErrorData): ServiceError => new ServiceError('forbidden', MESSAGES.forbidden, data);
/**
 * -32004 `Resource not found`; `data` says what was not found (docs/contract.md#errors):
 * `resource` (`project`, `workflow`, `page`) and `reason` (`unknown id`, `none active`, `unknown path`).
 */
export const notFound = (data: NotFoundData): ServiceError =>
  new ServiceError('not_found', MESSAGES.notFound, { ...data });
export const rateLimited = (data: ErrorData): ServiceError =>
  new ServiceError('rate_limited', MESSAGES.rateLimited, data);

/** A JSON-RPC error object body (`error` member of a response). */
export interface JsonRpcErrorBody {
  code: number;
  message: string;
  data?: ErrorData;
}

/**
 * The error the MCP SDK's protocol layer serialises as it is: it reads `code`, `message` and
 * `data` off whatever a request handler throws. (The SDK's own `McpError` prefixes the message
 * with "MCP error <code>:", which would break the exact messages of the table.)
 */
export class JsonRpcFailure extends Error implements JsonRpcErrorBody {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: ErrorData,
  ) {
    super(message);
    this.name = 'JsonRpcFailure';
  }
}

/**
 * Maps anything thrown to a JSON-RPC error body. Unknown errors become -32603 `Internal error`
 * with no stack or SQL; the caller is expected to log the original.
 */
export function toJsonRpcError(error: unknown): JsonRpcErrorBody {
  if (error instanceof ServiceError) {
    const body: JsonRpcErrorBody = { code: ERROR_TABLE[error.kind].code, message: error.message };
    if (error.data !== undefined) body.data = error.data;
    return body;
  }
  if (error instanceof JsonRpcFailure) {
    const body: JsonRpcErrorBody = { code: error.code, message: error.message };
    if (error.data !== undefined) body.data = error.data;
    return body;
  }
  if (isStoreUnavailable(error))
    return { code: ERROR_TABLE.internal.code, message: MESSAGES.internal, data: { ...STORE_UNAVAILABLE_DATA } };
  return { code: ERROR_TABLE.internal.code, message: MESSAGES.internal };
}

/**
 * `error.data` of a -32603 caused by a store that cannot answer now (the database restarts, is
 * stopped or does not answer): the call may be sent again a little later
 * (docs/operators.md, "When PostgreSQL restarts"). HTTP routes answer 503 with `Retry-After` then.
 */
export const STORE_UNAVAILABLE_DATA = Object.freeze({ reason: 'store_unavailable', retryable: true });

/**
 * The HTTP status and `Retry-After` seconds of a failure an HTTP route did not expect: 503 and
 * `STORE_RETRY_AFTER_SECONDS` when the store cannot answer now, else 500 and none.
 */
export function unexpectedFailureStatus(error: unknown): { status: 500 | 503; retryAfterSeconds?: number } {
  return isStoreUnavailable(error) ? { status: 503, retryAfterSeconds: STORE_RETRY_AFTER_SECONDS } : { status: 500 };
}

/** True for errors that are the caller's fault or expected (not worth an error-level log). */
export function isExpectedError(error: unknown): boolean {
  return error instanceof ServiceError && error.kind !== 'internal';
}
