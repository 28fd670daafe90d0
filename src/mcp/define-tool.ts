/**
 * The one adapter that owns everything protocol-shaped about a tool (docs/architecture.md): the zod
 * input and output schemas turned into JSON Schema once, annotations, title, the validation of
 * arguments into errors of the table in docs/contract.md#errors, and the `CallToolResult` of the same page
 * (`structuredContent` plus the same JSON as one text item). A tool file only declares.
 */
import { z } from 'zod';
import type { Caller } from '../auth/caller.js';
import type { Elicitation } from './elicitation.js';
import { toolIcons, type Icon } from './icons.js';
import { parameterError } from './parameter-errors.js';
import { ToolResultWithJson } from './reply-json.js';
import type { MemoCovers } from './reply-memo.js';
import type { ToolServices } from './tool-services.js';

/** MCP tool annotations (hints for a host; they are not security controls). */
interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * The request a tool call arrived in, as far as a long call needs it (absent for calls made inside
 * the server, such as the web console's).
 */
export interface ToolRequest {
  /** Aborts when the client went away (HTTP connection closed, stdio input ended). */
  signal?: AbortSignal;
  /**
   * Sends one MCP `notifications/progress` for this request (present only when the request
   * carried `_meta.progressToken` and its transport can send notifications). `progress` grows by
   * one per call; `message` is shown by hosts.
   */
  progress?(message: string): void;
  /**
   * Lets the call run `ms` milliseconds past the transport's per-message deadline (a wait the
   * caller asked for, such as `svc_get_session`'s `waitSeconds`).
   */
  extendDeadline?(ms: number): void;
  /**
   * Asks the person a question (MCP elicitation, form mode): present only when the client declared
   * the capability and the transport can carry the question (`elicitation.ts`).
   */
  elicitation?: Elicitation;
}

/** What a tool's handler receives besides its arguments. */
interface ToolContext {
  caller: Caller;
  services: ToolServices;
  request?: ToolRequest;
}

/** One item of a `CallToolResult`'s `content` (MCP 2025-11-25 "Tool Result"). */
export type ContentItem =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name: string; title?: string; mimeType?: string; description?: string };

/**
 * A handler's output with content items to send after the JSON text item (see `withContent`). Its
 * JSON texts are made on first use and kept: a handler that returns the same one again (a cached
 * answer, such as `svc_get_session`'s) is not serialised again.
 */
class OutputWithContent<T> {
  #text: string | undefined;
  #contentJson: string | undefined;

  constructor(
    readonly output: T,
    readonly content: ContentItem[],
  ) {}

  /** `JSON.stringify(output)`. */
  text(): string {
    return (this.#text ??= JSON.stringify(this.output));
  }

  /** `JSON.stringify` of the result's content: the text item, then `content`. */
  contentJson(): string {
    return (this.#contentJson ??= JSON.stringify([{ type: 'text', text: this.text() }, ...this.content]));
  }
}

/**
 * Wraps a handler's output so that the result's `content` also holds `content` (after the one text
 * item with the JSON); `structuredContent` is `output` alone.
 */
export function withContent<T>(output: T, content: ContentItem[]): T {
  return new OutputWithContent(output, content) as unknown as T;
}

/** A tool as declared in `src/mcp/tools/`. */
export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model: what it does, when to use it, what each error means. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  handle(args: z.output<I>, context: ToolContext): z.input<O> | Promise<z.input<O>>;
  /**
   * Which calls of a read-only tool (annotated `readOnlyHint`) the gateway's reply memo may keep
   * (docs/architecture.md "The reply memo"), given the call's raw `arguments`: only calls whose
   * answer depends on nothing but the caller, the arguments and the rows the store's
   * `rowGeneration()` covers (workflows, questions, artifacts, projects, users), and which neither
   * wait nor render. Absent: no call of the tool is kept.
   */
  memo?(args: Readonly<Record<string, unknown>>): boolean;
  /**
   * What the kept answers depend on besides the caller and the arguments (`MemoCovers`): `rows`
   * (the default) or `project`, one project row alone, which the memo keeps on PostgreSQL too.
   */
  memoCovers?: MemoCovers;
}

/** The `tools/list` entry of a tool. */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: ToolAnnotations & { title: string };
  /** What a host shows for the tool (MCP 2025-11-25 "Icons", `icons.ts`). */
  icons: Icon[];
  /** Extension metadata (the MCP Apps card's `ui.resourceUri`, `app-card.ts`), for the hosts that declare it. */
  _meta?: Record<string, unknown>;
}

/**
 * The MCP `CallToolResult` a successful call returns; `S` is the type of its `structuredContent`
 * (the tool's output: what its handler returned, `z.input` of its output schema).
 */
export interface ToolResult<S = Record<string, unknown>> {
  [key: string]: unknown;
  /** The JSON of `structuredContent` as one text item first, then any items the tool added. */
  content: [{ type: 'text'; text: string }, ...ContentItem[]];
  structuredContent: S;
}

/**
 * A tool ready to list and call. `I` and `O` are its input and output schemas, whose types the
 * typed caller (`tool-caller.ts`) gives its arguments and answers.
 */
export interface Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  input: I;
  output: O;
  descriptor: ToolDescriptor;
  /**
   * Validates `args` and runs the tool.
   * @throws ServiceError -32602 for bad arguments, or whatever the service throws.
   */
  call(args: unknown, context: ToolContext): Promise<ToolResult<z.input<O>>>;
  /**
   * What the answer to a call with these raw `arguments` depends on when the reply memo may keep
   * it (the tool's `memo` and `memoCovers`, and its `readOnlyHint`); null when it may not (a tool
   * that declared neither).
   */
  memoizable(args: Readonly<Record<string, unknown>>): MemoCovers | null;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** Builds a callable tool from its declaration. Schemas are converted once, on first use. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(definition: ToolDefinition<I, O>): Tool<I, O> {
  // Converted on first `tools/list`, not at start: `initialize` does not need them (docs/performance.md "Start-up time").
  let descriptor: ToolDescriptor | undefined;
  return {
    name: definition.name,
    input: definition.input,
    output: definition.output,
    get descriptor() {
      descriptor ??= {
        name: definition.name,
        title: definition.title,
        description: definition.description,
        inputSchema: jsonSchema(definition.input, 'input'),
        outputSchema: jsonSchema(definition.output, 'output'),
        annotations: { title: definition.title, ...definition.annotations },
        icons: toolIcons(definition.name),
      };
      return descriptor;
    },
    memoizable(args) {
      const kept = definition.annotations.readOnlyHint && definition.memo !== undefined && definition.memo(args);
      return kept ? (definition.memoCovers ?? 'rows') : null;
    },
    async call(args, context) {
      const parsed = definition.input.safeParse(args ?? {});
      if (!parsed.success) throw parameterError(parsed.error.issues, args ?? {});
      return resultOf<O>((await definition.handle(parsed.data, context)) as z.input<O>);
    },
  };
}

/**
 * The `CallToolResult` of a handler's output (`withContent`'s too). The output is serialised once:
 * for its text item, and reused as `structuredContent` in the reply's JSON (reply-json.ts).
 */
function resultOf<O extends z.ZodObject>(returned: z.input<O>): ToolResult<z.input<O>> {
  if (returned instanceof OutputWithContent) {
    const text = returned.text();
    const contentJson = () => returned.contentJson();
    return new ToolResultWithJson<ToolResult['content'], z.input<O>>(
      [{ type: 'text', text }, ...(returned.content as ContentItem[])],
      returned.output as z.input<O>,
      text,
      contentJson,
    );
  }
  const text = JSON.stringify(returned);
  return new ToolResultWithJson<ToolResult['content'], z.input<O>>([{ type: 'text', text }], returned, text);
}
