/**
 * What the tool adapter reports of each tool call, for the metrics (docs/metrics.md): the tool's
 * name (one of this server's tools, or `unknown`: a name is the client's input and never becomes
 * a label as sent) and how the call ended (`ok`, or its JSON-RPC error code).
 */
import { toJsonRpcError } from '../errors.js';
import { InputRequiredSignal } from './elicitation.js';

/** Receives one report per tool call; it only counts (it must not throw or block). */
export interface ToolCallObserver {
  /**
   * @param tool a tool of this server, or `unknown`.
   * @param code `ok`, or the JSON-RPC error code the call was answered with (`-32005`).
   */
  toolCalled(tool: string, code: string): void;
}

/**
 * The label a thrown error gives a call: its JSON-RPC code, as the client receives it; `ok` for a
 * call answered with an `input_required` result (a question for the person, not a failure).
 */
export function callCode(error: unknown): string {
  if (error instanceof InputRequiredSignal) return 'ok';
  return String(toJsonRpcError(error).code);
}
