/**
 * The session card of the MCP Apps extension (`io.modelcontextprotocol/ui`, docs/contract.md#app-card):
 * `svc_get_session` names a `ui://` resource of the extension's HTML media type, which a host that
 * declares the extension renders in the chat as an interactive card. The card is one self-contained
 * HTML file (`dist/session-card.html`, built by `scripts/build-card.mjs` from `assets/card/`).
 *
 * Offered only to a client that declares the extension in its capabilities (per request in the
 * 2026-07-28 era; per connection over stdio in 2025-11-25): a client without it receives exactly
 * what it received before (no `_meta.ui`, no `resources/*`).
 */
import { readFileSync } from 'node:fs';
import {
  EXTENSION_ID,
  getUiCapability,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
} from '@modelcontextprotocol/ext-apps/server';
import { invalidParameter, missingParameter } from '../errors.js';
import type { ToolDescriptor } from './define-tool.js';
import type { JsonRpcReply } from './in-process-transport.js';

/** The card's resource URI. */
export const CARD_URI = 'ui://mobile-builder/session-card.html';

/** The tool whose results the card shows. */
const CARD_TOOL = 'svc_get_session';

/** The built card, beside the package's other build output (the same path from src/ and dist/). */
const CARD_FILE = new URL('../../dist/session-card.html', import.meta.url);

/**
 * True when `capabilities` (a client's, from the 2026-07-28 request envelope) declares the MCP Apps
 * extension with the extension's HTML media type (or with no media types listed).
 */
function declaresApps(capabilities: unknown): boolean {
  if (capabilities === null || typeof capabilities !== 'object') return false;
  const ui = getUiCapability(capabilities as Parameters<typeof getUiCapability>[0]);
  if (ui === null || typeof ui !== 'object') return false;
  const types = (ui as { mimeTypes?: unknown }).mimeTypes;
  return !Array.isArray(types) || types.includes(RESOURCE_MIME_TYPE);
}

/** The `_meta` the extension puts on a tool with a UI: `ui.resourceUri`, and its older flat key. */
function cardToolMeta(): Record<string, unknown> {
  return { ui: { resourceUri: CARD_URI }, [RESOURCE_URI_META_KEY]: CARD_URI };
}

/** `descriptors` as a host with the extension sees them: the card tool carries the card's URI. */
export function withCardMeta(descriptors: readonly ToolDescriptor[]): ToolDescriptor[] {
  return descriptors.map((d) => (d.name === CARD_TOOL ? { ...d, _meta: { ...d._meta, ...cardToolMeta() } } : d));
}

/** The resource as `resources/list` shows it. */
export const CARD_RESOURCE = {
  name: 'session-card',
  title: 'Project session card',
  description:
    "The project's active workflow, latest screenshot, deployments (QR codes), pending question, and build, deploy and cancel buttons.",
  mimeType: RESOURCE_MIME_TYPE,
};

/**
 * The card's `_meta.ui` (extension "UI Resource"): a content security policy with no domain (the
 * card loads nothing, frames nothing and talks only to its host) and a border.
 */
export const CARD_RESOURCE_META = {
  ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] }, prefersBorder: true },
};

let html: string | null | undefined;

/** The card's HTML, read once; null when the build has not made it (then the card is not offered). */
function cardHtml(): string | null {
  if (html === undefined) {
    try {
      html = readFileSync(CARD_FILE, 'utf8');
    } catch {
      html = null;
    }
  }
  return html;
}

/**
 * What one connection's client declared (2025-11-25 over stdio, where the process serves one
 * client): `apps` once its `initialize` declared the MCP Apps extension and the card exists.
 */
export interface ConnectionState {
  apps: boolean;
}

/** A server's capabilities as a client with the extension sees them: `resources` and the extension too. */
function withCardCapabilities(capabilities: Record<string, unknown>): Record<string, unknown> {
  return { ...capabilities, resources: {}, extensions: { [EXTENSION_ID]: {} } };
}

/** The `resources/list` result: the card alone. */
export function cardResourceList(): {
  resources: Array<typeof CARD_RESOURCE & { uri: string; _meta: typeof CARD_RESOURCE_META }>;
} {
  return { resources: [{ uri: CARD_URI, ...CARD_RESOURCE, _meta: CARD_RESOURCE_META }] };
}

/**
 * The `resources/read` result of `params.uri`.
 * @throws ServiceError -32602 when `uri` is missing, not a string, or not the card's.
 */
export function readCardResource(params: Record<string, unknown> | undefined): {
  contents: Array<{ uri: string; mimeType: string; text: string; _meta: typeof CARD_RESOURCE_META }>;
} {
  const uri = params?.uri;
  if (uri === undefined) throw missingParameter('uri');
  if (uri !== CARD_URI) throw invalidParameter('uri', `must be ${CARD_URI}, the one resource of this server`);
  return {
    contents: [{ uri: CARD_URI, mimeType: RESOURCE_MIME_TYPE, text: cardHtml() ?? '', _meta: CARD_RESOURCE_META }],
  };
}

/**
 * Remembers whether a connection's client declared the MCP Apps extension at `initialize`, and if
 * so adds it (and `resources`) to the capabilities of the reply (`app-card.ts`).
 */
export function declareCard(
  connection: ConnectionState,
  params: Record<string, unknown> | undefined,
  reply: JsonRpcReply,
): void {
  connection.apps = declaresApps(params?.capabilities) && cardHtml() !== null;
  const result = reply.result as { capabilities?: Record<string, unknown> } | undefined;
  if (connection.apps && result?.capabilities) result.capabilities = withCardCapabilities(result.capabilities);
}

/**
 * The MCP Apps card's HTML when a 2026-07-28 request's envelope declares the extension in its
 * `clientCapabilities` (and the build made the card), else undefined: the request is then answered
 * exactly as for a host without the extension.
 */
export function cardFor(message: Record<string, unknown>): string | undefined {
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (!declaresApps(meta?.['io.modelcontextprotocol/clientCapabilities'])) return undefined;
  return cardHtml() ?? undefined;
}
