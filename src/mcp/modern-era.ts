/**
 * The MCP 2026-07-28 era beside 2025-11-25 (docs/contract.md#protocol-versions), on the v2 SDK
 * (`@modelcontextprotocol/server`). A 2026-07-28 request carries the per-request `_meta`
 * envelope (`io.modelcontextprotocol/protocolVersion`, `clientInfo`, `clientCapabilities`)
 * instead of an `initialize` handshake; this module is loaded on the first such request.
 *
 * What the SDK does here: it classifies each request of the era and checks its envelope and,
 * over HTTP, that the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers agree with the
 * body (`classifyInboundRequest`), and a v2 `Server` answers `server/discover`, `tools/list`
 * (the dispatcher's list, with the era's `resultType`, `ttlMs`, `cacheScope` and server identity)
 * and an unsupported revision (-32022 with the supported ones) through `createMcpHandler`.
 * What the gateway does: `tools/call`, the hot path, goes to the dispatcher as in the other era,
 * and its result gets the era's two fields (`stampCall`), so both eras give the same answers.
 */
import { EXTENSION_ID, registerAppResource, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import {
  classifyInboundRequest,
  createMcpHandler,
  inputRequired,
  McpServer,
  SERVER_INFO_META_KEY,
  Server,
  type InputRequiredResult,
  type ListToolsResult,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { CARD_RESOURCE, CARD_RESOURCE_META, CARD_URI } from './app-card.js';
import type { InputRequiredSignal } from './elicitation.js';
import type { JsonRpcReply } from './in-process-transport.js';
import { ENVELOPE_VERSION_KEY, MODERN_PROTOCOL_VERSIONS, type ProtocolHeaders } from './protocol-era.js';
import type { ServerDescription } from './server-description.js';
import type { ToolDispatcher } from './tool-dispatcher.js';

/** How the era takes one request: refused before admission (with the HTTP status), or accepted. */
export type ModernVerdict =
  | { kind: 'refused'; error: NonNullable<JsonRpcReply['error']>; status: number }
  /** `supported`: the revision the envelope names is one this server serves. */
  | { kind: 'accepted'; revision: string; supported: boolean };

/**
 * How long a client may keep `tools/list` and `server/discover` results, in ms: both are the same
 * for every caller and change only with a new server version.
 */
const LIST_TTL_MS = 5 * 60 * 1000;

/** The 2026-07-28 era as the gateway uses it. */
export interface ModernEra {
  /** Classifies one request or notification that carries the envelope; never throws. */
  classify(message: Record<string, unknown>, headers: ProtocolHeaders | undefined): ModernVerdict;
  /**
   * Answers `message` with the v2 SDK server (`server/discover`, `tools/list`, and any request that
   * names an unsupported revision). Resolves with the reply (the request's own id) and its HTTP status.
   * @param card the MCP Apps card's HTML when the client declared the extension (`app-card.ts`):
   *   the server then also declares it and `resources`, lists the card on `svc_get_session` and
   *   answers `resources/list` and `resources/read`; undefined otherwise.
   */
  serve(
    message: Record<string, unknown>,
    revision: string,
    card?: string,
  ): Promise<{ reply: JsonRpcReply; status: number }>;
  /** A `tools/call` result of the other era with this era's `resultType` and server identity. */
  stampCall<T extends object>(result: T): T & { resultType: 'complete'; _meta: Record<string, unknown> };
  /**
   * The `input_required` result that asks the person `signal.form` under `signal.key` (the SDK's
   * `inputRequired` builders), with the server identity; the client retries the call with the
   * answer in `inputResponses`.
   */
  inputRequired(signal: InputRequiredSignal): InputRequiredResult;
}

/** The SDK's cache hints of the two lists (the era's `ttlMs` and `cacheScope` on their results). */
const LIST_CACHE_HINTS = {
  'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
  'server/discover': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
} as const;

/** Builds the era around the dispatcher's tool list (called once, by `createMcpServer`'s loader). */
export function loadModernEra(description: ServerDescription, tools: ToolDispatcher): ModernEra {
  const handler = plainHandler(description, tools);
  let cardHandler: McpHttpHandler | undefined;
  const identity = { [SERVER_INFO_META_KEY]: description.info };

  return {
    classify: classifyRequest,

    serve(message, revision, card) {
      // The server of a client with the MCP Apps extension is made on first use.
      return serveWith(
        card === undefined ? handler : (cardHandler ??= cardServerHandler(description, tools, card)),
        message,
        revision,
      );
    },

    inputRequired(signal) {
      const asked = inputRequired({
        inputRequests: { [signal.key]: inputRequired.elicit({ mode: 'form', ...signal.form }) },
      });
      return { ...asked, _meta: { ...asked._meta, ...identity } };
    },

    stampCall(result) {
      const own = (result as { _meta?: Record<string, unknown> })._meta;
      return { ...result, resultType: 'complete', _meta: { ...own, ...identity } };
    },
  };
}

/**
 * The v2 SDK handler of a client without the MCP Apps extension: a `Server` per request, with the
 * description's capabilities and instructions, answering `tools/list` with the dispatcher's list
 * (the JSON Schema descriptors the other era lists, checked by the SDK's result schema).
 * Requests without the era's envelope are refused (`legacy: 'reject'`).
 */
function plainHandler(description: ServerDescription, tools: ToolDispatcher): McpHttpHandler {
  return createMcpHandler(
    () => {
      const server = new Server(description.info, {
        capabilities: description.capabilities,
        instructions: description.instructions,
        cacheHints: LIST_CACHE_HINTS,
      });
      server.setRequestHandler('tools/list', () => tools.listResult as unknown as ListToolsResult);
      return server;
    },
    { legacy: 'reject' },
  );
}

/**
 * The v2 SDK handler of a client with the MCP Apps extension (docs/contract.md#app-card): the same
 * server as `plainHandler`'s, which also declares the extension, registers the card as an app
 * resource (`resources/list`, `resources/read`) and lists the tools as they are listed to such a
 * client (`ToolDispatcher.listFor`).
 * @param html the card's HTML, served as the resource's text.
 */
function cardServerHandler(description: ServerDescription, tools: ToolDispatcher, html: string): McpHttpHandler {
  return createMcpHandler(
    () => {
      const capabilities = { ...description.capabilities, extensions: { [EXTENSION_ID]: {} } };
      const server = new McpServer(description.info, {
        capabilities,
        instructions: description.instructions,
        cacheHints: LIST_CACHE_HINTS,
      });
      registerAppResource(
        server,
        CARD_RESOURCE.name,
        CARD_URI,
        { ...CARD_RESOURCE, _meta: CARD_RESOURCE_META },
        () => ({
          contents: [{ uri: CARD_URI, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: CARD_RESOURCE_META }],
        }),
      );
      server.server.setRequestHandler('tools/list', () => tools.listFor(undefined, true) as unknown as ListToolsResult);
      return server.server;
    },
    { legacy: 'reject' },
  );
}

/**
 * `ModernEra.classify`: the SDK's verdict on one message that carries the envelope
 * (`classifyInboundRequest`), checked against the HTTP request's protocol headers, or over stdio
 * (`headers` undefined) against the body's own values. Refused: the SDK's code, message, data and
 * HTTP status, or -32020 with status 400 for a standard header missing or naming another tool
 * (`headerMismatch`). Accepted: the revision claimed and whether this server serves it. Never throws.
 */
function classifyRequest(message: Record<string, unknown>, headers: ProtocolHeaders | undefined): ModernVerdict {
  const params = message.params as { name?: unknown; uri?: unknown } | undefined;
  // Over stdio the body is the only signal: the headers are the body's own values (`Mcp-Name`
  // is a tool's name or a resource's URI).
  const name = params?.name ?? params?.uri;
  const own = headers ?? {
    protocolVersion: claimedVersion(params),
    method: message.method as string,
    ...(typeof name === 'string' && { name }),
  };
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    ...(own.protocolVersion !== undefined && { protocolVersionHeader: own.protocolVersion }),
    ...(own.method !== undefined && { mcpMethodHeader: own.method }),
    ...(own.name !== undefined && { mcpNameHeader: own.name }),
    body: message,
  });
  if (outcome.kind === 'reject') {
    return {
      kind: 'refused',
      error: {
        code: outcome.code,
        message: outcome.message,
        ...(outcome.data !== undefined && { data: outcome.data }),
      },
      status: outcome.httpStatus,
    };
  }
  // The standard request headers (MCP 2026-07-28 "Standard Request Headers"): the SDK's
  // classifier compares what is present; its entry layer, which this gateway does not use for
  // `tools/call`, also requires them. Over HTTP a request of the era carries all three, so a
  // proxy that routes or authorizes on them sees what the server will run.
  if (headers && outcome.kind === 'modern' && 'id' in message) {
    const missing = headerMismatch(message, headers);
    if (missing) return { kind: 'refused', error: missing, status: 400 };
  }
  // A claim the SDK does not read as this era (it has no envelope after all): the gateway's own
  // checks already passed, so the request is served as the other era would serve it.
  const revision =
    outcome.kind === 'modern'
      ? (outcome.classification.revision ?? claimedVersion(params) ?? '')
      : (claimedVersion(params) ?? '');
  return { kind: 'accepted', revision, supported: MODERN_PROTOCOL_VERSIONS.includes(revision) };
}

/**
 * Has `handler` answer `message` as the HTTP POST of that revision would be answered (the standard
 * request headers set from the body), in process.
 * @returns the reply, with the request's own id (null for none), and the handler's HTTP status.
 */
async function serveWith(
  handler: McpHttpHandler,
  message: Record<string, unknown>,
  revision: string,
): Promise<{ reply: JsonRpcReply; status: number }> {
  // `Mcp-Name` names the tool of a `tools/call`, the resource of a `resources/read`.
  const params = message.params as { name?: unknown; uri?: unknown } | undefined;
  const name = params?.name ?? params?.uri;
  const response = await handler.fetch(
    new Request('http://in-process/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': revision,
        'mcp-method': String(message.method),
        ...(typeof name === 'string' && { 'mcp-name': name }),
      },
      body: JSON.stringify(message),
    }),
  );
  const reply = JSON.parse(await response.text()) as JsonRpcReply;
  return { reply: { ...reply, id: (message.id as JsonRpcReply['id']) ?? null }, status: response.status };
}

/** JSON-RPC code of a request whose headers and body disagree (the SDK's `HEADER_MISMATCH_ERROR_CODE`). */
const HEADER_MISMATCH = -32020;
/** `Mcp-Name` values that are not plain text travel as `=?base64?<canonical base64>?=`. */
const BASE64_SENTINEL = /^=\?base64\?((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)\?=$/;

/**
 * Why an HTTP request of the 2026-07-28 era fails the standard header rules, or null: the
 * `MCP-Protocol-Version` and `Mcp-Method` headers are required, and a `tools/call`'s `Mcp-Name`
 * (plain, or Base64 in its sentinel) must name `params.name`.
 */
function headerMismatch(
  message: Record<string, unknown>,
  headers: ProtocolHeaders,
): NonNullable<JsonRpcReply['error']> | null {
  const refuse = (header: string, body: string) => ({
    code: HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: ${body}`,
    data: { mismatch: { header, body } },
  });
  if (headers.protocolVersion === undefined)
    return refuse('(missing)', 'the required MCP-Protocol-Version header is absent');
  if (headers.method === undefined)
    return refuse(
      '(missing)',
      `the body names method ${String(message.method)} but the required Mcp-Method header is absent`,
    );
  if (message.method !== 'tools/call') return null;
  const name = (message.params as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string') return null;
  if (headers.name === undefined)
    return refuse('(missing)', `the body carries params.name="${name}" but the required Mcp-Name header is absent`);
  const header = headers.name.trim();
  const sentinel = BASE64_SENTINEL.exec(header);
  const decoded = sentinel ? Buffer.from(sentinel[1]!, 'base64').toString('utf8') : header;
  return decoded === name
    ? null
    : refuse(header, `the body carries params.name="${name}" but the Mcp-Name header names "${decoded}"`);
}

/** The revision an envelope claims (`params._meta["io.modelcontextprotocol/protocolVersion"]`), if a string. */
function claimedVersion(params: unknown): string | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const version = meta?.[ENVELOPE_VERSION_KEY];
  return typeof version === 'string' ? version : undefined;
}
