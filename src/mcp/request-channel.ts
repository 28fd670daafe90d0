/**
 * What a transport hands `JsonRpcGateway` with each message besides its text
 * (docs/architecture.md "One message, end to end"): the admission policy of the transport, and the
 * request's channel (notifications before the reply, the disconnect and cancel signals, the
 * server's own requests over stdio).
 */
import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Admission } from '../auth/request-gate.js';
import type { ConnectionState } from './app-card.js';

/**
 * Decides who may send `method`: returns the admission (caller and rate window), null when the
 * method needs no caller, or throws a ServiceError (-32001, -32005).
 */
export type AdmissionPolicy = (method: string) => Promise<Admission | null>;

/**
 * What a transport offers a request besides its reply: a way to send notifications for it before
 * the reply (stdio writes a line; HTTP turns the response into an SSE stream), and a signal that
 * aborts when the client has gone.
 */
export interface RequestChannel {
  /** Sends one JSON-RPC notification tied to the request. */
  notify?(message: JsonRpcNotification): void;
  signal?: AbortSignal;
  /**
   * A channel that carries many requests (stdio): the signal of request `id`, which also aborts
   * when the client cancels it (`cancel`); `release` forgets it once the request is answered.
   */
  requestSignal?(id: RequestId): { readonly signal: AbortSignal; release(): void };
  /** The client sent `notifications/cancelled` for request `id` (MCP 2025-11-25 "Cancellation"). */
  cancel?(id: RequestId): void;
  /** A channel of one client (stdio): what its `initialize` declared (the MCP Apps card, `app-card.ts`). */
  connection?: ConnectionState;
  /**
   * A connection that is the session (stdio): sends the client a request of the server's (an
   * `elicitation/create`); the client's response comes back as a message of its own.
   */
  request?(message: JSONRPCRequest): void;
}

/** A JSON-RPC notification the server sends (here: `notifications/progress`). */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params: Record<string, unknown>;
}
