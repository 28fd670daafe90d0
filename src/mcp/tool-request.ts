/**
 * The request object a tool sees for one `tools/call`: its signal, its deadline and, when the
 * request asked for it, a progress sender; and the check of the request's `params._meta`.
 */
import { invalidParameter } from '../errors.js';
import type { Deadline } from './deadline-queue.js';
import type { ToolRequest } from './define-tool.js';

/** What a tool's request uses of the channel it came on (the gateway's `RequestChannel`). */
interface RequestChannel {
  notify?(message: { jsonrpc: '2.0'; method: string; params: Record<string, unknown> }): void;
  signal?: AbortSignal;
}

/**
 * The tool's view of its request: the disconnect (or cancellation) signal, the deadline, and a
 * progress sender when the request carries `_meta.progressToken` and the transport can notify
 * (MCP 2025-11-25 "Progress": `progress` increases with each notification). One object per call,
 * no closure: the signal is made when a tool that waits first reads it (an AbortSignal per request,
 * and the listeners behind it, cost more than a whole svc_get_project call).
 */
class CallRequest implements ToolRequest {
  progress?: (message: string) => void;

  constructor(
    private readonly channel: RequestChannel | undefined,
    private readonly deadline: Deadline,
    private readonly deadlineMs: number,
    private readonly scoped: { readonly signal: AbortSignal } | undefined,
  ) {}

  get signal(): AbortSignal | undefined {
    return this.scoped?.signal ?? this.channel?.signal;
  }

  extendDeadline(ms: number): void {
    this.deadline.extend(ms + this.deadlineMs);
  }
}

/** The request of one `tools/call` (see `CallRequest`), with its progress sender if it asked for progress. */
export function toolRequest(
  params: Record<string, unknown> | undefined,
  channel: RequestChannel | undefined,
  deadline: Deadline,
  deadlineMs: number,
  scoped?: { readonly signal: AbortSignal },
): ToolRequest {
  const request = new CallRequest(channel, deadline, deadlineMs, scoped);
  const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
  if (channel?.notify && (typeof token === 'string' || typeof token === 'number')) {
    let progress = 0;
    request.progress = (message) => {
      progress += 1;
      channel.notify?.({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: token, progress, message },
      });
    };
  }
  return request;
}

/**
 * `params._meta` as MCP defines it: an object whose `progressToken`, when present, is a string or
 * an integer.
 * @throws ServiceError -32602 otherwise.
 */
export function checkMeta(meta: unknown): void {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta))
    throw invalidParameter('params._meta', 'must be an object');
  if (!('progressToken' in meta)) return;
  const token = (meta as { progressToken: unknown }).progressToken;
  if (typeof token !== 'string' && !(typeof token === 'number' && Number.isSafeInteger(token))) {
    throw invalidParameter('params._meta.progressToken', 'must be a string or an integer');
  }
}
