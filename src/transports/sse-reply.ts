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
import type { JsonRpcNotification, RequestChannel } from '../mcp/request-channel.js';
import { replyJson } from '../mcp/reply-json.js';

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
 * The channel of one POST (one object per request, no closures: most requests only pass it on).
 * Keep it a class: as an object literal of getters and closures over `req` and `res` it kept every
 * request's objects alive past the young generation (measured with `--trace-gc` under load: 4x
 * the scavenge time, and mark-compacts the class never causes).
 * Its signal is made when a tool first reads it (a wait): an AbortController per request is a
 * measurable share of a short call's cost.
 */
class SseReply implements SseReplyChannel {
  private gone: AbortController | undefined;
  private sse: boolean | undefined;
  private started = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly headers: () => string[],
  ) {}

  get signal(): AbortSignal {
    if (!this.gone) {
      const controller = new AbortController();
      this.gone = controller;
      const res = this.res;
      if (res.closed) {
        if (!res.writableFinished) controller.abort();
      } else {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort();
        });
      }
    }
    return this.gone.signal;
  }

  get streaming(): boolean {
    return this.started;
  }

  notify(message: JsonRpcNotification): void {
    this.sse ??= acceptsEventStream(this.req.headers.accept);
    if (!this.sse || this.res.destroyed) return;
    if (!this.started) {
      this.started = true;
      this.res.writeHead(200, [
        'Content-Type',
        'text/event-stream',
        'Cache-Control',
        'no-store',
        'X-Accel-Buffering',
        'no',
        ...this.headers(),
      ]);
      this.res.flushHeaders();
    }
    this.write(JSON.stringify(message));
  }

  finish(reply: JsonRpcReply | null): void {
    if (reply) this.write(replyJson(reply));
    this.res.end();
  }

  private write(json: string): void {
    if (!this.res.destroyed) this.res.write(`event: message\ndata: ${json}\n\n`);
  }
}

const NO_HEADERS = (): string[] => [];

/**
 * Makes the channel of one POST to `/mcp`. Its signal aborts when the client goes away before the
 * reply is sent (so a waiting call ends and gives its request slot back).
 * @param headers headers to send if the stream starts (such as `X-RateLimit-*`), as name, value pairs.
 */
export function sseReplyChannel(
  req: IncomingMessage,
  res: ServerResponse,
  headers: () => string[] = NO_HEADERS,
): SseReplyChannel {
  return new SseReply(req, res, headers);
}
