/**
 * A streamable HTTP reply that may turn into a Server-Sent Events stream (MCP 2025-11-25
 * "Streamable HTTP": a POST's response is either one JSON body or an SSE stream carrying the
 * request's notifications and then its response). The stream starts only when the request sends
 * a notification (a `notifications/progress` of a waiting `svc_get_session`) and the client
 * accepts `text/event-stream`; otherwise the reply stays one JSON body, and a client that accepts
 * only `application/json` gets no notification.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcReply } from '../mcp/in-process-transport.js';
import type { JsonRpcNotification, RequestChannel } from '../mcp/json-rpc-gateway.js';

/** The channel of one POST, and how to end its stream when it became one. */
export interface SseReplyChannel extends RequestChannel {
  /** True once the response is an SSE stream (its status and headers are sent). */
  readonly streaming: boolean;
  /** Writes the final response as the stream's last event and ends it (only when `streaming`). */
  finish(reply: JsonRpcReply | null): void;
}

/** True when the request's `Accept` names `text/event-stream` (or accepts anything). */
function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'text/event-stream' || type === '*/*';
  });
}

/**
 * Makes the channel of one POST to `/mcp`. Its signal aborts when the client goes away before the
 * reply is sent (so a waiting call ends and gives its request slot back).
 * @param headers headers to send if the stream starts (such as `X-RateLimit-*`), as name, value pairs.
 */
export function sseReplyChannel(req: IncomingMessage, res: ServerResponse, headers: () => string[] = () => []): SseReplyChannel {
  // Made when a tool first reads the signal (a wait): most requests never do, and an
  // AbortController per request is a measurable share of a short call's cost.
  let gone: AbortController | undefined;
  const signal = (): AbortSignal => {
    if (!gone) {
      gone = new AbortController();
      const controller = gone;
      if (res.closed) {
        if (!res.writableFinished) controller.abort();
      } else {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort();
        });
      }
    }
    return gone.signal;
  };
  let sse: boolean | undefined;
  let streaming = false;
  const write = (message: JsonRpcNotification | JsonRpcReply) => {
    if (!res.destroyed) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  };
  return {
    get signal() {
      return signal();
    },
    get streaming() {
      return streaming;
    },
    notify: (message) => {
      sse ??= acceptsEventStream(req.headers.accept);
      if (!sse || res.destroyed) return;
      if (!streaming) {
        streaming = true;
        res.writeHead(200, ['Content-Type', 'text/event-stream', 'Cache-Control', 'no-store', 'X-Accel-Buffering', 'no', ...headers()]);
        res.flushHeaders();
      }
      write(message);
    },
    finish: (reply) => {
      if (reply) write(reply);
      res.end();
    },
  };
}
