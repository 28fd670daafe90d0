/**
 * `tools/list` and `tools/call` (docs/contract.md#errors): the tool adapter's entry points. Failures are
 * thrown as `ServiceError`s (design table), never returned as `isError` results.
 */
import type { z } from 'zod';
import type { Caller } from '../auth/caller.js';
import {
  forbidden,
  invalidParameter,
  missingParameter,
  toolNotFound,
  unauthenticated,
  type ServiceError,
} from '../errors.js';
import type { Tool, ToolDescriptor, ToolRequest, ToolResult } from './define-tool.js';
import { withCardMeta } from './app-card.js';
import { callCode, type ToolCallObserver } from './tool-call-observer.js';
import type { ToolServices } from './tool-services.js';
import type { MemoCovers } from './reply-memo.js';

/** Lists and calls the tools by name. */
export class ToolDispatcher {
  private readonly byName: Map<string, Tool>;
  private list: { tools: ToolDescriptor[] } | undefined;
  private readOnlyList: { tools: ToolDescriptor[] } | undefined;
  /** The lists of a host with the MCP Apps extension (`app-card.ts`): every tool, and a read-only token's. */
  private readonly appsLists = new Map<boolean, { tools: ToolDescriptor[] }>();

  /**
   * @param observer told of every call's outcome (`call`, `run`, and refusals at admission, `refused`): the metrics.
   */
  constructor(
    tools: readonly Tool[],
    private readonly services: ToolServices,
    private readonly observer?: ToolCallObserver,
  ) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
  }

  /** The `tools/list` result, built once, on first use. */
  get listResult(): { tools: ToolDescriptor[] } {
    this.list ??= { tools: [...this.byName.values()].map((t) => t.descriptor) };
    return this.list;
  }

  /**
   * The `tools/list` result for `caller`: every tool, or for a read-only token (`Caller.readOnly`)
   * only the tools annotated `readOnlyHint`; with `apps` (the client declared the MCP Apps
   * extension), `svc_get_session` names its card (`app-card.ts`).
   */
  listFor(caller: Caller | undefined, apps = false): { tools: ToolDescriptor[] } {
    if (apps) {
      const readOnly = caller?.readOnly === true;
      let list = this.appsLists.get(readOnly);
      if (!list) this.appsLists.set(readOnly, (list = { tools: withCardMeta(this.listFor(caller).tools) }));
      return list;
    }
    if (!caller?.readOnly) return this.listResult;
    this.readOnlyList ??= { tools: this.listResult.tools.filter((t) => t.annotations.readOnlyHint) };
    return this.readOnlyList;
  }

  /**
   * Runs `tools/call` with its raw `params`.
   * @throws ServiceError -32001 without a caller; -32602 for a missing or non-string `name` or
   *   non-object `arguments`; -32601 for an unknown tool; else whatever the tool throws.
   * @param request the transport's side of the call (cancellation, progress, deadline), if any.
   */
  call(
    params: Record<string, unknown> | undefined,
    caller: Caller | undefined,
    request?: ToolRequest,
  ): Promise<ToolResult> {
    const called = this.dispatch(params, caller, request);
    return this.observer ? this.observed(this.labelOf(params), called) : called;
  }

  /**
   * The tool a `tools/call` with these raw `params` names when the reply memo may keep its answer
   * (`Tool.memoizable`: a read-only tool that declared which calls), with the call's arguments
   * and what its answer depends on;
   * else undefined (an unknown tool, arguments that are not an object, a call that waits or renders).
   */
  memoizable(
    params: Record<string, unknown> | undefined,
  ): { tool: string; args: Readonly<Record<string, unknown>>; covers: MemoCovers } | undefined {
    const name = params?.name;
    if (typeof name !== 'string') return undefined;
    const tool = this.byName.get(name);
    const args = params!.arguments ?? {};
    if (!tool || args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
    const covers = tool.memoizable(args as Record<string, unknown>);
    return covers ? { tool: name, args: args as Record<string, unknown>, covers } : undefined;
  }

  /** Reports a call answered from the reply memo to the observer (as `call` reports its calls). */
  answered(tool: string): void {
    this.observer?.toolCalled(tool, 'ok');
  }

  /**
   * Reports a `tools/call` refused before it reached the dispatcher (authentication, rate limit:
   * the transport's admission) to the observer.
   */
  refused(params: Record<string, unknown> | undefined, error: unknown): void {
    this.observer?.toolCalled(this.labelOf(params), callCode(error));
  }

  private async dispatch(
    params: Record<string, unknown> | undefined,
    caller: Caller | undefined,
    request?: ToolRequest,
  ): Promise<ToolResult> {
    if (!caller) throw unauthenticated();
    const p = params ?? {};
    if (p.name === undefined) throw missingParameter('name');
    if (typeof p.name !== 'string') throw invalidParameter('name', 'must be a string');
    const tool = this.byName.get(p.name);
    if (!tool) throw toolNotFound(p.name);
    if (caller.readOnly && !tool.descriptor.annotations.readOnlyHint) throw readOnlyRefusal(tool.name);
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
  run<I extends z.ZodObject, O extends z.ZodObject>(
    tool: Tool<I, O>,
    args: unknown,
    caller: Caller,
  ): Promise<ToolResult<z.input<O>>> {
    const called = tool.call(args, { caller, services: this.services });
    return this.observer ? this.observed(tool.name, called) : called;
  }

  /** The tool label of a call: its name when it names one of these tools, else `unknown`. */
  private labelOf(params: Record<string, unknown> | undefined): string {
    const name = params?.name;
    return typeof name === 'string' && this.byName.has(name) ? name : 'unknown';
  }

  /** `called`, reported to the observer as it settles. */
  private async observed<T>(tool: string, called: Promise<T>): Promise<T> {
    try {
      const result = await called;
      this.observer?.toolCalled(tool, 'ok');
      return result;
    } catch (error) {
      this.observer?.toolCalled(tool, callCode(error));
      throw error;
    }
  }
}

/** -32003 for a read-only token calling a tool that writes (`Caller.readOnly`). */
function readOnlyRefusal(tool: string): ServiceError {
  return forbidden({
    reason: 'read_only_token',
    tool,
    hint: `This API token is read-only: it may call only the tools that read (svc_list_projects, svc_get_project, svc_get_session, svc_get_messages), not ${tool}. Nothing was done. Ask the user for a token made without --read-only.`,
  });
}
