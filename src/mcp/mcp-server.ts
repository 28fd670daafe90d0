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
import { NO_SCHEMA_VALIDATOR } from './no-schema-validator.js';
import type { ServerDescription } from './server-description.js';
import type { ToolDispatcher } from './tool-dispatcher.js';

/** `serverInfo.name` at `initialize`. */
const SERVER_NAME = 'mobile-builder-mcp';

/** Guidance the server gives a model at `initialize`. */
const SERVER_INSTRUCTIONS = [
  'This server manages native mobile app projects and runs build and deploy workflows on them through a building agent.',
  'Typical use: svc_create_project, then svc_send_message with kind "build" and an instruction, then svc_send_message with kind "deploy". Always pass kind.',
  'Workflows run one at a time per project; later ones queue (a send with kind and no questionId is a new instruction, even while a question waits). Follow a workflow with svc_get_session and waitSeconds (up to 60): it returns when the workflow changes step, asks a question or ends, so do not poll. Read the conversation with svc_get_messages (pass nextAfter as after).',
  'When svc_get_session shows a pendingQuestion, answer it with svc_send_message (questionId = pendingQuestion.questionId). After a build, call svc_get_session with screenshot: true to see the app on a phone-sized screen before you describe it. svc_cancel_workflow stops work.',
  'A pendingQuestion of kind "code" is addressed to YOU, not to the user: the building agent asks you to write the app\'s code. Its prompt holds the task (the user\'s instruction, the app\'s files, the packages and rules); answer yourself, without asking the user, with svc_send_message whose message is JSON {"summary": "...", "files": [{"path": "App.tsx", "content": "<whole file>"}], "delete": []} matching pendingQuestion.format, at most pendingQuestion.maxLength characters. The server checks it (-32602 lists each problem in error.data.issues: fix and resend), type-checks it, and may ask again with the compiler\'s errors.',
  'Errors are JSON-RPC errors; each tool description says what its codes mean and what to do. -32005 means wait (error.data.retryAfterSeconds) and repeat; -32003 and -32004 will not change by retrying.',
].join('\n');

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
  const description: ServerDescription = {
    info: { name: SERVER_NAME, title: 'Mobile app builder', version },
    capabilities: { tools: { listChanged: false } },
    instructions: SERVER_INSTRUCTIONS,
  };
  let modern: Promise<ModernEra> | undefined;
  return {
    legacy: createLegacyServer(description),
    modern: (tools) => (modern ??= import('./modern-era.js').then(({ loadModernEra }) => loadModernEra(description, tools))),
  };
}

function createLegacyServer(description: ServerDescription): Server {
  const server = new Server(description.info, { capabilities: description.capabilities, instructions: description.instructions, jsonSchemaValidator: NO_SCHEMA_VALIDATOR });
  // The SDK answers unknown methods with a bare "Method not found"; the contract names the method.
  server.fallbackRequestHandler = async (request) => {
    const body = toJsonRpcError(methodNotFound(request.method));
    throw new JsonRpcFailure(body.code, body.message, body.data);
  };
  return server;
}
