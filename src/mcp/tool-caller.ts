/**
 * The typed tool caller: the tools as methods for callers inside the server (the web console),
 * derived from the tool definitions (`tools/index.ts`), so that a tool's arguments are checked
 * against its input schema and its answer has its output schema's type. A change to a tool's
 * output breaks its callers at compile time; no caller names a tool by string or casts its answer.
 * Each call runs the tool as `tools/call` does (the same validation, errors and limits).
 */
import type { z } from 'zod';
import type { Caller } from '../auth/caller.js';
import type { Tool, ToolResult } from './define-tool.js';

/** The arguments a tool takes, before defaults (`z.input` of its input schema). */
export type ToolArguments<T> = T extends Tool<infer I, z.ZodObject> ? z.input<I> : never;

/** The answer of a tool: its `structuredContent`, as its handler returns it (`z.input` of its output schema). */
type ToolOutput<T> = T extends Tool<z.ZodObject, infer O> ? z.input<O> : never;

/**
 * Arguments taken from a form or a query string: the tool's own parameter names (checked at
 * compile time), each absent or holding the tool's type or the text as typed, which the tool
 * validates and refuses with its own -32602 (the answer any MCP client would get).
 */
export type FormArguments<A> = { [K in keyof A]?: A[K] | string };

/** One tool as a method. */
interface ToolMethod<A, O> {
  /**
   * Calls the tool as `caller`.
   * @returns its answer (`structuredContent`).
   * @throws ServiceError as `tools/call` does (-32602 for bad arguments, the service's errors).
   */
  (args: A, caller: Caller): Promise<O>;
  /** The same call with arguments as a form gave them (see `FormArguments`). */
  fromForm(args: FormArguments<A>, caller: Caller): Promise<O>;
  /** The same call, answering the whole result: the answer and the content items after its JSON (images, resource links). */
  result(args: A, caller: Caller): Promise<ToolResult<O>>;
}

/** The typed caller of a record of tools: one method per tool, named by its key. */
export type ToolCaller<T extends Record<string, Tool>> = {
  readonly [K in keyof T]: ToolMethod<ToolArguments<T[K]>, ToolOutput<T[K]>>;
};

/** What runs one tool for a caller (`ToolDispatcher.run`). */
export interface ToolRunner {
  run<I extends z.ZodObject, O extends z.ZodObject>(
    tool: Tool<I, O>,
    args: unknown,
    caller: Caller,
  ): Promise<ToolResult<z.input<O>>>;
}

/** Builds the typed caller of `tools`, each call run by `runner`. */
export function createToolCaller<T extends Record<string, Tool>>(tools: T, runner: ToolRunner): ToolCaller<T> {
  const methods: Record<string, ToolMethod<unknown, unknown>> = {};
  for (const [key, tool] of Object.entries(tools)) {
    const result = (args: unknown, caller: Caller) => runner.run(tool, args, caller);
    const call = async (args: unknown, caller: Caller) => (await result(args, caller)).structuredContent;
    methods[key] = Object.assign(call, { fromForm: call, result });
  }
  // The one place the record's keys meet their types: each method above runs `tools[key]`.
  return methods as ToolCaller<T>;
}
