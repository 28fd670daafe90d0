/**
 * `tools/list` and `tools/call` (docs/contract.md#errors): the tool adapter's entry points. Failures are
 * thrown as `ServiceError`s (design table), never returned as `isError` results.
 */
import type { z } from 'zod';
import type { Caller } from '../auth/caller.js';
import { invalidParameter, missingParameter, toolNotFound, unauthenticated } from '../errors.js';
import type { Tool, ToolDescriptor, ToolRequest, ToolResult } from './define-tool.js';
import type { ToolServices } from './tool-services.js';

/** Lists and calls the tools by name. */
export class ToolDispatcher {
  private readonly byName: Map<string, Tool>;
  private list: { tools: ToolDescriptor[] } | undefined;

  constructor(
    tools: readonly Tool[],
    private readonly services: ToolServices,
  ) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
  }

  /** The `tools/list` result, built once, on first use. */
  get listResult(): { tools: ToolDescriptor[] } {
    this.list ??= { tools: [...this.byName.values()].map((t) => t.descriptor) };
    return this.list;
  }

  /**
   * Runs `tools/call` with its raw `params`.
   * @throws ServiceError -32001 without a caller; -32602 for a missing or non-string `name` or
   *   non-object `arguments`; -32601 for an unknown tool; else whatever the tool throws.
   * @param request the transport's side of the call (cancellation, progress, deadline), if any.
   */
  async call(params: Record<string, unknown> | undefined, caller: Caller | undefined, request?: ToolRequest): Promise<ToolResult> {
    if (!caller) throw unauthenticated();
    const p = params ?? {};
    if (p.name === undefined) throw missingParameter('name');
    if (typeof p.name !== 'string') throw invalidParameter('name', 'must be a string');
    const tool = this.byName.get(p.name);
    if (!tool) throw toolNotFound(p.name);
    const args = p.arguments;
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
      throw invalidParameter('arguments', 'must be an object');
    }
    return tool.call(args, { caller, services: this.services, ...(request && { request }) });
  }

  /**
   * Runs one tool for a caller inside the server (the typed caller, `tool-caller.ts`): the same
   * validation and errors as `tools/call`, with the tool's own answer type.
   * @throws ServiceError -32602 for bad arguments, else whatever the tool throws.
   */
  run<I extends z.ZodObject, O extends z.ZodObject>(tool: Tool<I, O>, args: unknown, caller: Caller): Promise<ToolResult<z.input<O>>> {
    return tool.call(args, { caller, services: this.services });
  }
}
