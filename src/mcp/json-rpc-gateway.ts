/**
 * The one path of a JSON-RPC message from either transport (docs/architecture.md "One message, end
 * to end"): parse, envelope check, admission (authentication and rate limit, per the transport's
 * policy), then the answer, with the HTTP status of the error table (docs/contract.md#errors).
 * Every HTTP body and stdio line is answered here. The one exception is a stdio start's first line
 * when it is a plainly valid `initialize`: the early start answers it before this server is loaded
 * (`cli/early-stdio-start.ts`, docs/performance.md "Start-up time"), with the envelope checks of
 * `jsonrpc-envelope.ts` that this gateway runs too, and the line is then passed here as well (so
 * the SDK server learns of the client) with its reply left unwritten. The SDK servers
 * (`mcp-server.ts`, `modern-era.ts`) read no transport: they answer what this gateway hands them.
 *
 * Repeated reads are made cheap in one place: the reply memo (`reply-memo.ts`, docs/architecture.md
 * "The reply memo") answers a `tools/call` of a read-only tool that it answered before for the same
 * caller and arguments, while nothing the answer shows has changed, with the same bytes and the new
 * request id, once the rate limiter counted the call. Over HTTP it is looked up by the first stage,
 * `parseHttp`, which parses every body once and hands anything else on parsed (`handleValue`);
 * on every transport, by the answer of an admitted `tools/call`, which also fills it.
 *
 * Order of checks: parse (-32700, id null) -> envelope (-32600) -> params shape (-32602) ->
 * admission (-32001, -32005) -> method and tool rules.
 *
 * `tools/list` and `tools/call` go straight to the tool dispatcher (and `resources/list` and
 * `resources/read` to the MCP Apps card, for a client that declared it); only `initialize` and
 * `ping` go to the SDK's MCP server, through an in-process transport (its per-message dispatch
 * cost more than a whole `svc_get_project` call); any other method is -32601 here.
 *
 * A request that carries the 2026-07-28 `_meta` envelope (docs/contract.md#protocol-versions) is
 * checked by that era's SDK after the `params` checks and before admission, and answered by
 * `answerModern`: `tools/call` by the dispatcher as above, `server/discover` and `tools/list` by
 * the v2 SDK server.
 */
import {
  InitializeRequestSchema,
  PingRequestSchema,
  type JSONRPCRequest,
  type JSONRPCResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import { RateLimitedError, type Admission } from '../auth/request-gate.js';
import { methodNotFound, parseError } from '../errors.js';
import type { RateDecision } from '../limits/request-rate-limiter.js';
import type { Logger } from '../logger.js';
import { DeadlineQueue, type Deadline } from './deadline-queue.js';
import {
  boundedReply,
  checkedParams,
  deadlineReply,
  envelopeRefusal,
  errorReply,
  failureReply,
  notified,
  resultReply,
  whenSettled,
  type GatewayReply,
} from './gateway-envelope.js';
import { paramsProblem, validId } from './jsonrpc-envelope.js';
import {
  declaresFormElicitation,
  InputRequiredSignal,
  legacyElicitation,
  modernElicitation,
  type ElicitInput,
  type Elicitation,
} from './elicitation.js';
import { InProcessTransport, type JsonRpcReply } from './in-process-transport.js';
import type { McpServers } from './mcp-server.js';
import type { ModernEra, ModernVerdict } from './modern-era.js';
import { parameterError } from './parameter-errors.js';
import { cardFor, cardResourceList, declareCard, readCardResource } from './app-card.js';
import { withCardQrCodes } from './card-qr.js';
import { CARD_METHODS, claimsModernEra, MODERN_METHODS, type ProtocolHeaders } from './protocol-era.js';
import type { ToolDispatcher } from './tool-dispatcher.js';
import { ReplyMemo, type MemoStats } from './reply-memo.js';
import type { ToolRequest } from './define-tool.js';
import { checkMeta, toolRequest } from './tool-request.js';
import type { AdmissionPolicy, RequestChannel } from './request-channel.js';
import { startHeartbeat } from '../services/wait-heartbeat.js';

/** Methods the SDK server answers itself, with the SDK's schema for their parameters. */
const SDK_METHOD_SCHEMAS = new Map<string, typeof PingRequestSchema | typeof InitializeRequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
]);

/** Longest time a person has to answer a question asked over stdio (2025-11-25), in ms; then it counts as cancelled. */
const ELICIT_TIMEOUT_MS = 10 * 60_000;

/** Default of the per-message deadline, in ms. */
const DEFAULT_DEADLINE_MS = 30_000;

/** Handles one JSON-RPC message (text or parsed) end to end; never throws (failures become error replies). */
export class JsonRpcGateway {
  private readonly transport = new InProcessTransport();
  private readonly deadlines: DeadlineQueue;
  private tools: ToolDispatcher | undefined;
  /** Settles with the tools once they are attached (a message that needs them waits for it). */
  private readonly attached: Promise<ToolDispatcher>;
  private attach!: (tools: ToolDispatcher) => void;
  private started: Promise<void> | undefined;
  private need: (() => void) | undefined;
  private memo: ReplyMemo | undefined;

  /**
   * @param tools the tool adapter; absent, `attachTools` gives it later, and until then only
   *   messages that need no tool (`initialize`, `ping`) are answered, the others wait for it.
   * @param deadlineMs longest time one message may take before it is answered with -32603
   *   `Internal error` (`data.reason = "deadline_exceeded"`), in ms (default 30 000).
   */
  constructor(
    private readonly servers: McpServers,
    tools: ToolDispatcher | undefined,
    private readonly logger: Logger,
    private readonly deadlineMs = DEFAULT_DEADLINE_MS,
  ) {
    this.deadlines = new DeadlineQueue(deadlineMs);
    this.attached = new Promise((resolve) => (this.attach = resolve));
    if (tools) this.attachTools(tools);
  }

  /**
   * Gives the gateway its tool adapter: a stdio start answers `initialize` with a gateway made
   * before the store is open (docs/performance.md "Start-up time"), and the app attaches its tools once it is.
   * @param memo the reply memo of read-only calls (`reply-memo.ts`); absent, every call runs its tool.
   * @throws Error when tools are attached already.
   */
  attachTools(tools: ToolDispatcher, memo?: ReplyMemo): void {
    if (this.tools) throw new Error('the gateway has its tools already');
    this.tools = tools;
    this.memo = memo;
    this.attach(tools);
  }

  /** Called once, when a message first needs the tools before they are attached (a stdio start opens the store then). */
  whenToolsNeeded(need: () => void): void {
    this.need = need;
  }

  /** What the reply memo holds and has answered (`ReplyMemo.stats`); undefined before the tools are attached. */
  memoStats(): MemoStats | undefined {
    return this.memo?.stats();
  }

  /** The tool adapter, at once when attached, else once it is. */
  private toolsReady(): ToolDispatcher | Promise<ToolDispatcher> {
    if (this.tools) return this.tools;
    const need = this.need;
    this.need = undefined;
    need?.();
    return this.attached;
  }

  /** Connects the MCP server to the gateway's transport (once: later calls wait for the same). Call before handling messages. */
  start(): Promise<void> {
    this.started ??= this.servers.legacy.connect(this.transport);
    return this.started;
  }

  async close(): Promise<void> {
    await this.servers.legacy.close();
  }

  /**
   * Handles one raw message body (a JSON text).
   * @param headers the HTTP request's protocol headers (absent over stdio), checked against the
   *   body for a 2026-07-28 request.
   * @param channel the transport's notification path and disconnect signal for this request, if any.
   */
  handleText(
    text: string,
    admit: AdmissionPolicy,
    headers?: ProtocolHeaders,
    channel?: RequestChannel,
  ): Promise<GatewayReply> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return Promise.resolve(errorReply(null, parseError()));
    }
    return this.handleValue(value, admit, headers, channel);
  }

  /**
   * The first stage of an HTTP body whose token the transport has authenticated: parses `text`
   * once and, when it is a plain `tools/call` (an id, `params` without `_meta`) whose answer the
   * reply memo holds for `caller`, answers it from there once `admit` (the transport's admission
   * of `tools/call`, the rate limiter's count) let it through: the reply `handleValue` would give,
   * byte for byte, with no request slot, deadline or reply channel made for it. Anything else is
   * returned parsed (`value`), for `handleValue`; a body that is not JSON is answered (-32700).
   * A refusal by `admit` (-32005) is answered here as `handleValue` would, and reported the same way.
   * A hit is one synchronous step when `admit` decides at once (a lease in memory): the reply, no
   * promise. Its stamp takes the store's last look at other processes' commits (`lastLook` of
   * `ReplyMemo.look`): `caller` comes from the token cache's check of this request, which looked.
   */
  parseHttp(
    text: string,
    caller: Caller | null,
    admit: () => Admission | null | Promise<Admission | null>,
  ): { reply: GatewayReply | Promise<GatewayReply> } | { value: unknown } {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { reply: errorReply(null, parseError()) };
    }
    const tools = this.tools;
    const memo = this.memo;
    if (!caller || !tools || !memo || envelopeRefusal(value)) return { value };
    const message = value as Record<string, unknown>;
    const params = message.params;
    if (message.method !== 'tools/call' || !validId(message.id) || paramsProblem(message)) return { value };
    if (params === undefined || '_meta' in (params as object)) return { value };
    const kept = tools.memoizable(params as Record<string, unknown>);
    const looked = kept && memo.look(ReplyMemo.keyOf(caller, kept.tool, kept.args), kept.covers, true);
    if (!looked || !('hit' in looked)) return { value };
    const id = message.id as RequestId;
    const served = (admission: Admission | null): GatewayReply => {
      memo.served();
      tools.answered(kept!.tool);
      return resultReply(id, looked.hit, admission?.rate);
    };
    const refused = (error: unknown): GatewayReply => {
      tools.refused(params as Record<string, unknown>, error);
      if (error instanceof RateLimitedError) return errorReply(id, error, error.rate);
      return failureReply(id, error, undefined, this.logger);
    };
    return { reply: whenSettled(admit, served, refused) };
  }

  /**
   * Handles one parsed message; answers within the deadline whatever the handling does. A tool
   * that may take longer on the caller's request (`svc_get_session`'s `waitSeconds` and
   * `screenshot`) moves the deadline out by that time.
   */
  handleValue(
    value: unknown,
    admit: AdmissionPolicy,
    headers?: ProtocolHeaders,
    channel?: RequestChannel,
  ): Promise<GatewayReply> {
    return new Promise<GatewayReply>((resolve, reject) => {
      const deadline = this.deadlines.start(() => {
        this.logger.warn({ deadlineMs: this.deadlineMs }, 'request answered with Internal error: deadline exceeded');
        resolve(deadlineReply(value, this.deadlineMs));
      });
      this.route(value, admit, headers, channel, deadline).then(
        (reply) => {
          deadline.cancel();
          resolve(reply);
        },
        (error: unknown) => {
          deadline.cancel();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /**
   * Routes one parsed message (docs/architecture.md "One message, end to end"): the envelope, a
   * client response, then `params`, the 2026-07-28 era's verdict, admission, and the answer of a
   * notification, a tool call or another method. Never rejects for a failure of the handling: it
   * becomes an error reply (`failureReply`).
   * @param deadline the message's deadline, which a tool that waits on the caller's request moves out.
   */
  private async route(
    value: unknown,
    admit: AdmissionPolicy,
    headers: ProtocolHeaders | undefined,
    channel: RequestChannel | undefined,
    deadline: Deadline,
  ): Promise<GatewayReply> {
    const refusal = envelopeRefusal(value);
    if (refusal) return refusal;
    const message = value as Record<string, unknown>;
    const id = validId(message.id) ? (message.id as RequestId) : null;
    if (!('method' in message)) return this.received(message, channel);
    const method = message.method as string;
    let rate: RateDecision | undefined;
    try {
      const params = checkedParams(message);
      if (params && '_meta' in params) checkMeta(params._meta);
      const modern = claimsModernEra(params) ? await this.classifyModern(message, headers) : undefined;
      if (modern?.verdict.kind === 'refused')
        return { body: { jsonrpc: '2.0', id, error: modern.verdict.error }, status: modern.verdict.status };
      const admission = method === 'tools/call' ? await this.admitCall(admit, params) : await admit(method);
      rate = admission?.rate;
      if (!('id' in message)) return notified(method, params, channel, rate);
      if (modern || method === 'tools/call') {
        const scoped = channel?.requestSignal?.(id as RequestId);
        const request = toolRequest(params, channel, deadline, this.deadlineMs, scoped);
        const elicitation = modern ? modernElicitation(params) : this.legacyElicitation(channel, request);
        if (elicitation) request.elicitation = elicitation;
        try {
          if (modern)
            return await this.answerModern(
              modern.era,
              modern.verdict as Extract<ModernVerdict, { kind: 'accepted' }>,
              message,
              id as RequestId,
              admission,
              rate,
              request,
            );
          return await this.callTool(
            params,
            admission?.caller,
            request,
            id as RequestId,
            rate,
            channel?.connection?.apps === true,
          );
        } finally {
          scoped?.release();
        }
      }
      return await this.answerOther(message, id, params, admission, rate, channel);
    } catch (error) {
      if (error instanceof RateLimitedError) rate = error.rate;
      return failureReply(id, error, rate, this.logger);
    }
  }

  /**
   * Answers an admitted 2025-11-25 `tools/call`: from the reply memo when it kept the answer to this
   * caller's same call and nothing it shows has changed (the same bytes, the new `id`; reported to
   * the observer like any call), else by the dispatcher, whose answer the memo then keeps when the
   * tool allows it (`ToolDispatcher.memoizable`). Not kept: a call with `_meta`, and one on a
   * connection that shows the app card (`apps`: QR codes join its result, docs/contract.md#app-card).
   * @throws ServiceError as the dispatcher does.
   */
  private async callTool(
    params: Record<string, unknown> | undefined,
    caller: Caller | undefined,
    request: ToolRequest,
    id: RequestId,
    rate: RateDecision | undefined,
    apps: boolean,
  ): Promise<GatewayReply> {
    const tools = this.tools ?? (await this.toolsReady());
    const memo = this.memo;
    if (apps) return resultReply(id, await withCardQrCodes(params, await tools.call(params, caller, request)), rate);
    const kept = memo && caller && !(params && '_meta' in params) ? tools.memoizable(params) : undefined;
    if (!kept) return resultReply(id, await tools.call(params, caller, request), rate);
    const key = ReplyMemo.keyOf(caller!, kept.tool, kept.args);
    const looked = memo!.look(key, kept.covers);
    if ('hit' in looked) {
      memo!.served();
      tools.answered(kept.tool);
      return resultReply(id, looked.hit, rate);
    }
    const result = await tools.call(params, caller, request);
    memo!.keep(key, looked.miss, result);
    return resultReply(id, result, rate);
  }

  /**
   * A response from the client (a message with an `id` and a `result` or `error`, no `method`): on
   * a connection that carries the server's requests (stdio), to one of them (an elicitation),
   * matched by the SDK by its id; elsewhere (HTTP) dropped. Either way nothing is sent back (202).
   */
  private received(message: Record<string, unknown>, channel: RequestChannel | undefined): GatewayReply {
    if (channel?.request) this.transport.receive(message as unknown as JSONRPCResponse);
    return { body: null, status: 202 };
  }

  /**
   * Answers an admitted 2025-11-25 request other than `tools/call`: `tools/list` by the dispatcher;
   * `resources/list` and `resources/read` by the MCP Apps card when the connection's client declared
   * it (docs/contract.md#app-card); `initialize` and `ping` by the SDK server, after the SDK's own
   * check of their `params`. Only those reach the SDK server; anything else is answered here, at
   * once, so that no request can depend on the SDK's handling of odd `params` to get a reply.
   * @throws ServiceError -32601 for any other method, -32602 for `params` the SDK's schema refuses.
   */
  private async answerOther(
    message: Record<string, unknown>,
    id: RequestId | null,
    params: Record<string, unknown> | undefined,
    admission: Admission | null,
    rate: RateDecision | undefined,
    channel: RequestChannel | undefined,
  ): Promise<GatewayReply> {
    const method = message.method as string;
    const apps = channel?.connection?.apps === true;
    if (method === 'tools/list')
      return resultReply(id, (this.tools ?? (await this.toolsReady())).listFor(admission?.caller, apps), rate);
    if (apps && (method === 'resources/list' || method === 'resources/read'))
      return resultReply(id, method === 'resources/list' ? cardResourceList() : readCardResource(params), rate);
    const sdkSchema = SDK_METHOD_SCHEMAS.get(method);
    if (!sdkSchema) throw methodNotFound(method);
    const checked = sdkSchema.safeParse({ method, params: params ?? {} });
    if (!checked.success) throw parameterError(checked.error.issues, { params: params ?? {} });
    const reply = await this.transport.dispatch(message as unknown as JSONRPCRequest, this.deadlineMs);
    if (method === 'initialize' && channel?.connection) declareCard(channel.connection, params, reply);
    return boundedReply(reply, rate, this.logger);
  }

  /**
   * The elicitation of a 2025-11-25 `tools/call`: on a connection that carries the server's own
   * requests (stdio: `RequestChannel.request`) whose client declared form elicitation at
   * `initialize`, `elicitation/create` sent by the SDK server; else none (docs/contract.md#elicitation).
   */
  private legacyElicitation(channel: RequestChannel | undefined, request: ToolRequest): Elicitation | undefined {
    const send = channel?.request;
    if (!send || !declaresFormElicitation(this.servers.legacy.getClientCapabilities())) return undefined;
    this.transport.outbound = send;
    const ask: ElicitInput = async (form, options) => {
      request.extendDeadline?.(ELICIT_TIMEOUT_MS);
      // While the person answers, a host that asked for progress still hears the call is alive.
      const progress = request.progress;
      const stop = progress && startHeartbeat(() => progress('waiting for the user to answer the question'));
      try {
        return await this.servers.legacy.elicitInput(form, options);
      } finally {
        stop?.();
      }
    };
    return legacyElicitation(ask, () => request.signal, ELICIT_TIMEOUT_MS);
  }

  /** Admits a `tools/call`; a refusal (-32001, -32005) is reported to the dispatcher's observer, then thrown. */
  private async admitCall(
    admit: AdmissionPolicy,
    params: Record<string, unknown> | undefined,
  ): Promise<Admission | null> {
    try {
      return await admit('tools/call');
    } catch (error) {
      (await this.toolsReady()).refused(params, error);
      throw error;
    }
  }

  /** Loads the 2026-07-28 era (first time only) and has it classify `message`. */
  private async classifyModern(
    message: Record<string, unknown>,
    headers: ProtocolHeaders | undefined,
  ): Promise<{ era: ModernEra; verdict: ModernVerdict }> {
    const era = await this.servers.modern(await this.toolsReady());
    return { era, verdict: era.classify(message, headers) };
  }

  /**
   * Answers an admitted 2026-07-28 request: `tools/call` by the dispatcher (the same result and
   * errors as the other era, plus the era's `resultType` and server identity); `server/discover`,
   * `tools/list` and any request naming an unsupported revision by the v2 SDK server; any other
   * method is -32601 `Method not found: <method>`, as in the other era.
   * @throws ServiceError as the dispatcher does.
   */
  private async answerModern(
    era: ModernEra,
    verdict: Extract<ModernVerdict, { kind: 'accepted' }>,
    message: Record<string, unknown>,
    id: RequestId,
    admission: Admission | null,
    rate: RateDecision | undefined,
    request: ToolRequest,
  ): Promise<GatewayReply> {
    const method = message.method as string;
    const card = cardFor(message);
    if (!MODERN_METHODS.has(method) || (CARD_METHODS.has(method) && card === undefined)) throw methodNotFound(method);
    if (method === 'tools/call' && verdict.supported) {
      try {
        const result = await (
          await this.toolsReady()
        ).call(message.params as Record<string, unknown> | undefined, admission?.caller, request);
        return resultReply(id, era.stampCall(card ? await withCardQrCodes(message.params, result) : result), rate);
      } catch (error) {
        // A question for the person: the client asks it and retries the call with the answer.
        if (!(error instanceof InputRequiredSignal)) throw error;
        return resultReply(id, era.inputRequired(error), rate);
      }
    }
    const { reply, status } = await era.serve(message, verdict.revision, card);
    if (!reply.error)
      return {
        body: this.ownList(method, reply, admission?.caller, card !== undefined),
        status: 200,
        ...(rate && { rate }),
      };
    // The era's own refusals (-32020..-32022: headers, capabilities, revision) keep the SDK's words.
    if (reply.error.code <= -32020 && reply.error.code >= -32022) return { body: reply, status, ...(rate && { rate }) };
    return boundedReply(reply, rate, this.logger);
  }

  /**
   * The era's `tools/list` reply as `caller` may see it: a read-only token's lists only its tools
   * (`ToolDispatcher.listFor`), and is then no longer the same for every caller (`cacheScope`
   * "private"). Any other reply is returned as it is.
   * @param apps the client declared the MCP Apps extension (its list names the card).
   */
  private ownList(method: string, reply: JsonRpcReply, caller: Caller | undefined, apps: boolean): JsonRpcReply {
    if (method !== 'tools/list' || !caller?.readOnly || !this.tools || !reply.result) return reply;
    return {
      ...reply,
      result: { ...reply.result, tools: this.tools.listFor(caller, apps).tools, cacheScope: 'private' },
    };
  }
}
