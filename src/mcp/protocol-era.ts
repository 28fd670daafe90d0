/**
 * Which protocol era a request belongs to (docs/contract.md#protocol-versions), told without loading
 * the SDK: every request is asked, and the 2026-07-28 era (`modern-era.ts`, the v2 SDK) is loaded
 * only when one claims it.
 */

/**
 * The protocol headers of an HTTP request (absent over stdio, where the body is the only signal):
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`.
 */
export interface ProtocolHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

/** The revisions of the 2026 era this server serves (the SDK's `server/discover` advertises the same). */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/**
 * The methods of the era this server answers; any other is -32601 `Method not found: <method>`.
 * `resources/list` and `resources/read` only for a client that declares the MCP Apps extension
 * (`app-card.ts`).
 */
export const MODERN_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
]);

/** The methods of `MODERN_METHODS` that exist only for a client with the MCP Apps extension. */
export const CARD_METHODS: ReadonlySet<string> = new Set(['resources/list', 'resources/read']);

/** The `_meta` key whose presence claims the 2026 era (the SDK's `PROTOCOL_VERSION_META_KEY`). */
export const ENVELOPE_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * True when `params` claims the 2026 era: its `_meta` names a protocol version. Cheap, and free of
 * the SDK (the gateway asks it of every request; the era is loaded only when it says yes).
 */
export function claimsModernEra(params: Record<string, unknown> | undefined): boolean {
  const meta = params?._meta;
  return meta !== null && typeof meta === 'object' && ENVELOPE_VERSION_KEY in meta;
}
