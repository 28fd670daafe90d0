/**
 * The MCP server of the protocol itself (docs/contract.md#errors), in both protocol eras
 * (docs/contract.md#protocol-versions):
 * - 2025-11-25 and earlier: the SDK's `Server` answers `initialize` (version negotiation,
 *   capabilities, instructions), `ping`, and refuses any other method with
 *   `Method not found: <method>`.
 * - 2026-07-28: the v2 SDK's server answers `server/discover` (see `modern-era.ts`, loaded on the
 *   first request of that era only).
 * Tool traffic (`tools/list`, `tools/call`) is answered by the `ToolDispatcher` through the
 * gateway, which saves the SDK's per-message dispatch cost on the hot path (see `json-rpc-gateway.ts`).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { JsonRpcFailure, methodNotFound, toJsonRpcError } from '../errors.js';
import type { ModernEra } from './modern-era.js';
import { FORM_ANSWER_VALIDATOR } from './form-answer-validator.js';
import { describeServer, type ServerDescription } from './server-description.js';
import type { ToolDispatcher } from './tool-dispatcher.js';

/**
 * The protocol servers of both eras: `legacy` is the SDK `Server` of 2025-11-25 and earlier;
 * `modern` loads the 2026-07-28 era (the v2 SDK) on first use and resolves to the same object
 * every time.
 */
export interface McpServers {
  legacy: Server;
  modern(tools: ToolDispatcher): Promise<ModernEra>;
}

/** Creates the servers of both eras. No side effects until the legacy one is connected or `modern` is called. */
export function createMcpServer(version: string): McpServers {
  const description = describeServer(version);
  let modern: Promise<ModernEra> | undefined;
  return {
    legacy: createLegacyServer(description),
    modern: (tools) =>
      (modern ??= import('./modern-era.js').then(({ loadModernEra }) => loadModernEra(description, tools))),
  };
}

function createLegacyServer(description: ServerDescription): Server {
  const server = new Server(description.info, {
    capabilities: description.capabilities,
    instructions: description.instructions,
    jsonSchemaValidator: FORM_ANSWER_VALIDATOR,
  });
  // The SDK answers unknown methods with a bare "Method not found"; the contract names the method.
  server.fallbackRequestHandler = async (request) => {
    const body = toJsonRpcError(methodNotFound(request.method));
    throw new JsonRpcFailure(body.code, body.message, body.data);
  };
  return server;
}
