/**
 * An SDK `Transport` that lets one long-lived MCP `Server` answer many independent exchanges
 * (HTTP requests, stdio lines) at once: each request gets a process-unique id on the way in, so
 * that two clients that both use id 1 never collide, and its original id back on the way out.
 * This keeps per-request work to the request's own work (no server or transport per request).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCResponse,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** A JSON-RPC response or error object as the server sent it. */
export type JsonRpcReply = {
  jsonrpc: '2.0';
  id: RequestId | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/** The multiplexing SDK transport described above; `dispatch` is its only way in. */
export class InProcessTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /**
   * Where the server's own requests go (an `elicitation/create` on a stdio connection); without it
   * they are dropped.
   */
  outbound: ((message: JSONRPCRequest) => void) | undefined;

  private nextId = 1;
  private readonly pending = new Map<number, { originalId: RequestId; resolve: (reply: JsonRpcReply) => void }>();

  async start(): Promise<void> {}

  /** Receives the server's replies and its own requests (to `outbound`); its notifications are dropped. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message)) return;
    if ('method' in message) {
      this.outbound?.(message);
      return;
    }
    const entry = this.pending.get(message.id as number);
    if (!entry) return;
    this.pending.delete(message.id as number);
    entry.resolve({ ...(message as JsonRpcReply), id: entry.originalId });
  }

  async close(): Promise<void> {
    for (const [id, entry] of this.pending) {
      entry.resolve({ jsonrpc: '2.0', id: entry.originalId, error: { code: -32603, message: 'Internal error' } });
      this.pending.delete(id);
    }
    this.onclose?.();
  }

  /** Hands the server a client's response to one of its own requests (the SDK matches it by id). */
  receive(response: JSONRPCResponse): void {
    this.onmessage?.(response);
  }

  /**
   * Hands `request` to the server and resolves with its reply, carrying the request's own id.
   * When the server has not replied within `deadlineMs`, resolves with -32603 `Internal error`
   * (`data.reason = "deadline_exceeded"`) and forgets the request, so nothing waits for ever.
   */
  dispatch(request: JSONRPCRequest, deadlineMs: number): Promise<JsonRpcReply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        resolve({
          jsonrpc: '2.0',
          id: request.id,
          error: { code: -32603, message: 'Internal error', data: { reason: 'deadline_exceeded' } },
        });
      }, deadlineMs);
      timer.unref();
      this.pending.set(id, {
        originalId: request.id,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
      });
      this.onmessage?.({ ...request, id });
    });
  }
}
