/**
 * The JSON text of a JSON-RPC reply without serialising a tool result twice. A tool result carries
 * its `structuredContent` as JSON text in its first text item (docs/contract.md#tools), so that
 * text already exists when the reply is written: `define-tool.ts` builds the result as a
 * `ToolResultWithJson`, which keeps the text, and `replyJson` splices it in instead of walking the
 * object again. The output is byte for byte `JSON.stringify(reply)`.
 */
import type { JsonRpcReply } from './in-process-transport.js';

/**
 * A `CallToolResult` (`ToolResult` of `define-tool.ts`: `content`, then `structuredContent`, as plain
 * own properties; `Content` is its content items' type) that keeps the
 * JSON text of its `structuredContent` in a private field: invisible to `JSON.stringify`, to
 * `Object.keys` and to a spread (a copy such as the 2026-07-28 era's stamped result is a plain
 * object, serialised as usual). Neither property may change after it is made.
 */
export class ToolResultWithJson<
  Content extends [{ type: 'text'; text: string }, ...unknown[]] = [{ type: 'text'; text: string }, ...unknown[]],
  Structured = Record<string, unknown>,
> {
  [key: string]: unknown;
  readonly #structuredJson: string;
  readonly #contentJson: (() => string) | undefined;
  #json: string | undefined;

  /**
   * @param structuredJson `JSON.stringify(structuredContent)`.
   * @param contentJson gives `JSON.stringify(content)` when asked (a text kept from an earlier,
   *   equal result); absent: `content` is serialised.
   */
  constructor(
    readonly content: Content,
    readonly structuredContent: Structured,
    structuredJson: string,
    contentJson?: () => string,
  ) {
    this.#structuredJson = structuredJson;
    this.#contentJson = contentJson;
  }

  /** `JSON.stringify(this)`, with the structured content's text (and the content's, when given) reused. */
  toJsonText(): string {
    if (this.#json === undefined) {
      const content = this.#contentJson ? this.#contentJson() : JSON.stringify(this.content);
      this.#json = `{"content":${content},"structuredContent":${this.#structuredJson}}`;
    }
    return this.#json;
  }
}

/**
 * The JSON text of `reply`, equal to `JSON.stringify(reply)`: a `ToolResultWithJson` result is not
 * serialised again.
 */
export function replyJson(reply: JsonRpcReply): string {
  const result = (reply as { result?: unknown }).result;
  if (!(result instanceof ToolResultWithJson)) return JSON.stringify(reply);
  const keys = Object.keys(reply);
  // The gateway's shape, in its order: no key to escape or skip.
  if (
    keys.length === 3 &&
    keys[0] === 'jsonrpc' &&
    keys[1] === 'id' &&
    keys[2] === 'result' &&
    reply.jsonrpc === '2.0'
  ) {
    const id = JSON.stringify(reply.id);
    if (id !== undefined) return `{"jsonrpc":"2.0","id":${id},"result":${result.toJsonText()}}`;
  }
  let out = '{';
  for (const key of keys) {
    const part = key === 'result' ? result.toJsonText() : JSON.stringify((reply as Record<string, unknown>)[key]);
    if (part === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${part}`;
  }
  return `${out}}`;
}
