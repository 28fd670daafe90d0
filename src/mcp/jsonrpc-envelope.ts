/**
 * The JSON-RPC 2.0 envelope stage every message passes (docs/architecture.md "One message, end to
 * end"), with nothing to import: the gateway runs it (`gateway-envelope.ts` turns a problem into
 * its -32600 or -32602 reply), and so does a stdio start's early answer to `initialize`
 * (`early-initialize.ts`), which runs before the rest of the server is loaded
 * (docs/performance.md "Start-up time"). The two therefore refuse and accept the same envelopes.
 */

/** Whether `id` is a JSON-RPC request id this server accepts: a string, or a finite number. */
export function validId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** What is wrong with an envelope: the id to answer (null when it has no valid one) and the reason, if one is given. */
export interface EnvelopeProblem {
  id: string | number | null;
  /** `data.reason` of the -32600 reply; absent for a message that is not an object nor an array. */
  reason?: string;
}

/**
 * The problem of a parsed message whose envelope is not a JSON-RPC 2.0 request, notification or
 * response, checked in this order: not an object (a batch array says batches are unsupported; id
 * null), `jsonrpc` not "2.0", both `method` and `result`/`error`, no `method` in what is not a
 * response, `method` not a non-empty string, a request `id` neither a string nor a finite number
 * (id null). Undefined when the envelope is well formed (a client response included).
 * @param value the parsed message (any JSON value).
 */
export function envelopeProblem(value: unknown): EnvelopeProblem | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return Array.isArray(value) ? { id: null, reason: 'batch requests are not supported' } : { id: null };
  const message = value as Record<string, unknown>;
  const id = validId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') return { id, reason: 'jsonrpc must be "2.0"' };
  // Neither a request nor a response: answer it rather than guess (JSON-RPC 2.0 section 4).
  if ('method' in message && ('result' in message || 'error' in message))
    return { id, reason: 'a message cannot carry both method and result or error' };
  if (!('method' in message)) {
    if ('id' in message && ('result' in message || 'error' in message)) return undefined;
    return { id, reason: 'method is required' };
  }
  if (typeof message.method !== 'string' || message.method.length === 0)
    return { id, reason: 'method must be a non-empty string' };
  if ('id' in message && id === null) return { id: null, reason: 'id must be a string or a number' };
  return undefined;
}

/** Whether a message's `params` is present and not an object (-32602 `params` "must be an object"). */
export function paramsProblem(message: Record<string, unknown>): boolean {
  return (
    'params' in message &&
    (message.params === null || typeof message.params !== 'object' || Array.isArray(message.params))
  );
}
