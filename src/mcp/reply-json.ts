/**
 * The JSON text of a JSON-RPC reply without serialising a tool result twice. A tool result carries
 * its `structuredContent` as JSON text in its first text item (docs/contract.md#tools), so that
 * text already exists when the reply is written: `define-tool.ts` remembers it (and the whole
 * result's text), and `replyJson` splices it in instead of walking the object again. The output
 * is byte for byte `JSON.stringify(reply)`.
 *
 * A remembered object must not change after it is remembered (tool results are built per call
 * and only read afterwards).
 */
import type { JsonRpcReply } from './in-process-transport.js';

/** JSON texts of objects already serialised, by object. */
const remembered = new WeakMap<object, string>();

/** Records that `text` is `JSON.stringify(value)`; `value` must not change afterwards. */
export function rememberJson(value: object, text: string): void {
  remembered.set(value, text);
}

/** `JSON.stringify(value)` of a plain object, one level deep, reusing the remembered texts of its values. */
function objectJson(value: Record<string, unknown>): string {
  let out = '{';
  for (const key of Object.keys(value)) {
    const item = value[key];
    const text = (item !== null && typeof item === 'object' && remembered.get(item)) || JSON.stringify(item);
    if (text === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}

/**
 * The JSON text of `reply`, equal to `JSON.stringify(reply)`: a result that holds a remembered
 * text (a tool result, or its `structuredContent`) is not serialised again.
 */
export function replyJson(reply: JsonRpcReply): string {
  const result = (reply as { result?: unknown }).result;
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return JSON.stringify(reply);
  const whole = remembered.get(result);
  const structured = (result as { structuredContent?: unknown }).structuredContent;
  if (whole === undefined && !(structured !== null && typeof structured === 'object' && remembered.has(structured))) return JSON.stringify(reply);
  const text = whole ?? objectJson(result as Record<string, unknown>);
  let out = '{';
  for (const key of Object.keys(reply)) {
    const part = key === 'result' ? text : JSON.stringify((reply as Record<string, unknown>)[key]);
    if (part === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${part}`;
  }
  return `${out}}`;
}
