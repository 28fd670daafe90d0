/**
 * The answer to a stdio start's first message when it is a plainly valid `initialize`, computed
 * without the SDK, zod or any tool (docs/performance.md "Start-up time"): a stdio start writes it before it
 * loads the rest of the server, which then replays the same message through the gateway.
 *
 * The message passes the gateway's own envelope stage (`jsonrpc-envelope.ts`) first. The answer is
 * byte for byte the one the gateway gives (the SDK `Server`'s version negotiation,
 * capabilities, `serverInfo`, instructions, in its key order; `tests/early-initialize.test.ts`
 * compares the two). A message is answered here only when the SDK's schema certainly accepts it;
 * anything else (other keys, `_meta`, icons, an id that is not a string or an integer, a
 * capability that is not an object) gets `null`, and the gateway answers it as before.
 */
import { envelopeProblem, paramsProblem } from './jsonrpc-envelope.js';
import { describeServer } from './server-description.js';

/**
 * The protocol versions the SDK's `Server` accepts at `initialize`, latest first (the SDK's
 * `SUPPORTED_PROTOCOL_VERSIONS`, which `tests/early-initialize.test.ts` keeps equal); any other
 * requested version is answered with the first.
 */
export const INITIALIZE_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];

/** The MCP Apps extension's id (`app-card.ts`; the extension's `EXTENSION_ID`). */
const MCP_APPS = 'io.modelcontextprotocol/ui';

/** How deep a client's capabilities may nest and still be answered here. */
const MAX_CAPABILITY_DEPTH = 8;

/** Boolean leaves the SDK's client capability schema accepts (every other leaf is an object). */
const BOOLEAN_CAPABILITIES: ReadonlySet<string> = new Set(['roots.listChanged', 'elicitation.form.applyDefaults']);

/**
 * The JSON text (no newline) of the answer to `line` when it is a plainly valid `initialize`
 * request, as the gateway would write it for a server of package version `version`; null for any
 * other message (the gateway answers those).
 */
export function earlyInitializeReply(line: string, version: string): string | null {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return null;
  }
  // The gateway's own envelope stage first: what it refuses is answered by the gateway.
  if (envelopeProblem(message) || paramsProblem(message as Record<string, unknown>)) return null;
  if (!onlyKeys(message as Record<string, unknown>, ['jsonrpc', 'id', 'method', 'params'])) return null;
  const { id, method, params } = message as Record<string, unknown>;
  if (method !== 'initialize') return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  if (!isPlainObject(params) || !onlyKeys(params, ['protocolVersion', 'capabilities', 'clientInfo'])) return null;
  const { protocolVersion, capabilities, clientInfo } = params;
  if (typeof protocolVersion !== 'string' || !isCapabilityTree(capabilities, '', 0)) return null;
  // A host with the MCP Apps extension is answered by the gateway, which offers it the card.
  const extensions = (capabilities as Record<string, unknown>).extensions;
  if (isPlainObject(extensions) && MCP_APPS in extensions) return null;
  if (!isPlainObject(clientInfo) || !onlyKeys(clientInfo, ['name', 'title', 'version'])) return null;
  if (typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') return null;
  if (clientInfo.title !== undefined && typeof clientInfo.title !== 'string') return null;
  const server = describeServer(version);
  const result = {
    protocolVersion: INITIALIZE_PROTOCOL_VERSIONS.includes(protocolVersion)
      ? protocolVersion
      : INITIALIZE_PROTOCOL_VERSIONS[0],
    capabilities: server.capabilities,
    serverInfo: server.info,
    instructions: server.instructions,
  };
  // The key order of the SDK's reply, as the gateway passes it on.
  return JSON.stringify({ result, jsonrpc: '2.0', id });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(value).every((key) => keys.includes(key));
}

/**
 * Objects all the way down, but for the leaves the schema names, which must be booleans (an object
 * there is refused by the SDK's schema as a boolean would be anywhere else): what the SDK's
 * capability schema accepts whatever the keys.
 */
function isCapabilityTree(value: unknown, path: string, depth: number): boolean {
  if (depth > MAX_CAPABILITY_DEPTH || !isPlainObject(value)) return false;
  return Object.entries(value).every(([key, child]) => {
    const at = path ? `${path}.${key}` : key;
    return BOOLEAN_CAPABILITIES.has(at) ? typeof child === 'boolean' : isCapabilityTree(child, at, depth + 1);
  });
}
