/**
 * The MCP server (design section 3): the SDK's `Server` does the protocol (initialize and version
 * negotiation, ping, capabilities); this file adds `tools/list` and `tools/call` through the
 * public `fallbackRequestHandler`, because the SDK's own `tools/call` path answers failures as
 * `isError` results and reformats messages, while the contract wants JSON-RPC error objects with
 * the exact codes and messages of the design's table.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { JSONRPCRequest, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import { invalidParameter, isExpectedError, JsonRpcFailure, missingParameter, toJsonRpcError, toolNotFound, unauthenticated, methodNotFound } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Tool, ToolDescriptor } from './define-tool.js';
import type { ToolServices } from './tool-services.js';

export const SERVER_NAME = 'mobile-builder-mcp';

/** Guidance the server gives a model at `initialize`. */
export const SERVER_INSTRUCTIONS = [
  'This server manages native mobile app projects and runs build and deploy workflows on them through a building agent.',
  'Typical use: svc_create_project, then svc_send_message with a build instruction, then svc_send_message with a deploy instruction.',
  'Workflows run one at a time per project; later ones queue. Poll svc_get_session until hasActiveWorkflows is false, and read progress with svc_get_messages (pass nextAfter as after).',
  'When svc_get_session shows a pendingQuestion, answer it with svc_send_message (questionId = pendingQuestion.questionId). Open previewUrls in a browser to see the result. svc_cancel_workflow stops work.',
].join('\n');

/** Reads the caller the transport admitted (set in `authInfo.extra.caller`). */
function callerOf(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Caller | undefined {
  return extra.authInfo?.extra?.caller as Caller | undefined;
}

export interface McpServerDeps {
  tools: readonly Tool[];
  services: ToolServices;
  logger: Logger;
  version: string;
}

/** Creates the SDK server with every tool. No side effects until it is connected to a transport. */
export function createMcpServer(deps: McpServerDeps): Server {
  const byName = new Map(deps.tools.map((t) => [t.name, t]));
  const listResult: { tools: ToolDescriptor[] } = { tools: deps.tools.map((t) => t.descriptor) };
  const server = new Server(
    { name: SERVER_NAME, title: 'Mobile app builder', version: deps.version },
    { capabilities: { tools: { listChanged: false } }, instructions: SERVER_INSTRUCTIONS },
  );

  const callTool = async (request: JSONRPCRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
    const caller = callerOf(extra);
    if (!caller) throw unauthenticated();
    const params = (request.params ?? {}) as Record<string, unknown>;
    if (!('name' in params) || params.name === undefined) throw missingParameter('name');
    if (typeof params.name !== 'string') throw invalidParameter('name', 'must be a string');
    const tool = byName.get(params.name);
    if (!tool) throw toolNotFound(params.name);
    const args = params.arguments;
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
      throw invalidParameter('arguments', 'must be an object');
    }
    return tool.call(args, { caller, services: deps.services, signal: extra.signal });
  };

  server.fallbackRequestHandler = async (request, extra) => {
    try {
      switch (request.method) {
        case 'tools/list':
          return listResult;
        case 'tools/call':
          return await callTool(request, extra);
        default:
          throw methodNotFound(request.method);
      }
    } catch (error) {
      if (!isExpectedError(error)) deps.logger.error({ err: error, method: request.method }, 'request failed');
      const body = toJsonRpcError(error);
      throw new JsonRpcFailure(body.code, body.message, body.data);
    }
  };
  return server;
}
