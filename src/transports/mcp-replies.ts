/**
 * How the HTTP server reads an MCP request's headers and writes its replies: the bearer token,
 * the protocol headers, which JSON-RPC errors stay in band (status 200) and which map to an HTTP
 * status, the rate headers, and the small JSON answers of refusals.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import {
  httpStatusForCode,
  invalidRequest,
  STORE_UNAVAILABLE_DATA,
  toJsonRpcError,
  type ServiceError,
} from '../errors.js';
import { STORE_RETRY_AFTER_SECONDS } from '../store/unavailable.js';
import type { RateDecision } from '../limits/request-rate-limiter.js';
import type { GatewayReply } from '../mcp/gateway-envelope.js';
import { MODERN_PROTOCOL_VERSIONS, type ProtocolHeaders } from '../mcp/protocol-era.js';
import { replyJson } from '../mcp/reply-json.js';

const JSON_TYPE = 'application/json';

/** The token of an `Authorization: Bearer <token>` header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1] : '';
}

/**
 * JSON-RPC errors that an MCP client receives with HTTP 200 when they answer a well-formed,
 * authenticated request. MCP hosts treat any non-2xx reply as a broken transport: the SDK's
 * client throws `StreamableHTTPError` without `error.code`/`error.data`, and `mcp-remote` turns
 * it into -32001. -32001 keeps 401 (it is how MCP signals authentication), and refusals of the
 * transport itself (parse, envelope, body cap, foreign Host/Origin, protocol version, server
 * busy) keep their status. See docs/contract.md#errors.
 */
const IN_BAND_CODES: ReadonlySet<number> = new Set([-32601, -32602, -32603, -32003, -32004, -32005]);

/**
 * The `MCP-Protocol-Version` values this listener accepts: every revision of 2025-11-25 and before
 * (the SDK's list) and of the 2026-07-28 era (docs/contract.md#protocol-versions).
 */
export const PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** True when the request names a supported `MCP-Protocol-Version` (an MCP client, after initialize or discovery). */
export function mcpClient(version: string | string[] | undefined): boolean {
  return typeof version === 'string' && PROTOCOL_VERSIONS.includes(version);
}

/** The protocol headers a 2026-07-28 request's body is checked against (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). */
export function protocolHeaders(req: IncomingMessage): ProtocolHeaders {
  const { 'mcp-protocol-version': protocolVersion, 'mcp-method': method, 'mcp-name': name } = req.headers;
  if (protocolVersion === undefined && method === undefined && name === undefined) return NO_PROTOCOL_HEADERS;
  return {
    ...(typeof protocolVersion === 'string' && { protocolVersion }),
    ...(typeof method === 'string' && { method }),
    ...(typeof name === 'string' && { name }),
  };
}

/** The protocol headers of a request that sends none (shared: never changed). */
const NO_PROTOCOL_HEADERS: ProtocolHeaders = Object.freeze({});

/** Where a 401 points an OAuth client (RFC 9728 section 5.1): the protected resource metadata of `/mcp`. */
export function resourceMetadataUrl(base: string): string {
  return `${base}/.well-known/oauth-protected-resource/mcp`;
}

/** The `X-RateLimit-*` headers of the rate window that counted a request (none without one), as name, value pairs. */
export function rateHeaders(rate: RateDecision | undefined): string[] {
  if (!rate) return [];
  return [
    'X-RateLimit-Limit',
    String(rate.limit),
    'X-RateLimit-Remaining',
    String(rate.remaining),
    'X-RateLimit-Reset',
    String(rate.resetAt),
  ];
}

/** How a gateway reply is sent (`sendReply`). */
export interface ReplyContext {
  /** The request carried a bearer token: a 401 then says `error="invalid_token"`. */
  tokenPresented: boolean;
  /** The client speaks MCP (`mcpClient`): tool-level refusals of an authenticated request go in band, 200. */
  mcp: boolean;
  /** The protected resource metadata URL a 401 names (a listener that serves OAuth), or null for the plain realm. */
  resourceMetadata: string | null;
}

/**
 * Sends the gateway's reply to one `/mcp` request (docs/contract.md#errors): its rate headers,
 * `WWW-Authenticate` on 401, `Retry-After` on 429 and on a store outage (503), in band (200) for
 * an MCP client's authenticated refusals; a reply without body is sent as its bare status.
 */
export function sendReply(res: ServerResponse, reply: GatewayReply, context: ReplyContext): void {
  // One header list and one writeHead: this runs for every request.
  const headers = rateHeaders(reply.rate);
  if (reply.status === 401) {
    const params = context.resourceMetadata
      ? `resource_metadata="${context.resourceMetadata}"`
      : 'realm="mobile-builder-mcp"';
    headers.push(
      'WWW-Authenticate',
      context.tokenPresented ? `Bearer ${params}, error="invalid_token"` : `Bearer ${params}`,
    );
  }
  if (reply.status === 429) {
    const data = reply.body?.error?.data as { retryAfterSeconds?: number } | undefined;
    headers.push('Retry-After', String(data?.retryAfterSeconds ?? reply.rate?.retryAfterSeconds ?? 1));
  }
  if (reply.body === null) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  // A reply that carries a rate window answers an authenticated request (the gate counted it).
  const inBand =
    context.mcp &&
    reply.rate !== undefined &&
    reply.body.error !== undefined &&
    IN_BAND_CODES.has(reply.body.error.code);
  // The store cannot answer now (an outage): out of band, 503 with when to try again.
  const outage =
    !inBand && (reply.body.error?.data as { reason?: unknown } | undefined)?.reason === STORE_UNAVAILABLE_DATA.reason;
  if (outage) headers.push('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
  sendJsonText(res, inBand ? 200 : outage ? 503 : reply.status, replyJson(reply.body), headers);
}

/** Whether `path` is under `/previews/`, `/deployments/` or `/exports/` (the only paths a project's own origin serves). */
export function isArtifactPath(path: string): boolean {
  return path.startsWith('/previews/') || path.startsWith('/deployments/') || path.startsWith('/exports/');
}

/** 404 with `{"error": "Not found"}`. */
export function notFound(res: ServerResponse): void {
  sendJson(res, 404, { error: 'Not found' });
}

/** `/mcp` answers POST only: this server opens no SSE stream. */
export function refuseMcpMethod(res: ServerResponse): void {
  res.setHeader('Allow', 'POST');
  sendJson(res, 405, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid request',
      data: { reason: 'use POST; this server does not open SSE streams' },
    },
  });
}

/** 413 with the `body_too_large` error, closing the connection (the rest of the body is not read). */
export function bodyTooLarge(res: ServerResponse, limitBytes: number): void {
  res.setHeader('Connection', 'close');
  sendError(res, invalidRequest({ reason: 'body_too_large', limitBytes }), 413);
}

/** Sends `error` as a JSON-RPC error with id null, at `status` or the status of its code (docs/contract.md#errors). */
export function sendError(res: ServerResponse, error: ServiceError, status?: number): void {
  const body = toJsonRpcError(error);
  sendJson(res, status ?? httpStatusForCode(body.code), { jsonrpc: '2.0', id: null, error: body });
}

/** Sends `value` as JSON (`no-store`) with `status` and the extra headers (name, value pairs). */
export function sendJson(res: ServerResponse, status: number, value: unknown, extraHeaders: string[] = []): void {
  sendJsonText(res, status, JSON.stringify(value), extraHeaders);
}

function sendJsonText(res: ServerResponse, status: number, text: string, extraHeaders: string[]): void {
  res.writeHead(status, [
    'Content-Type',
    JSON_TYPE,
    'Content-Length',
    String(Buffer.byteLength(text)),
    'Cache-Control',
    'no-store',
    ...extraHeaders,
  ]);
  res.end(text);
}
