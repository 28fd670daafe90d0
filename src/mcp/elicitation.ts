/**
 * Asking the person (MCP "Elicitation", form mode) a question a tool found waiting
 * (docs/contract.md#elicitation). A tool asks through `ToolRequest.elicitation`, present only when
 * the client declared the capability and the transport can carry the question:
 * - 2025-11-25 over stdio: an `elicitation/create` request the SDK `Server` sends on the
 *   connection, whose response the client writes back on it (`legacyElicitation`);
 * - 2026-07-28 (HTTP and stdio): the call is answered with an `input_required` result whose
 *   embedded request the client fulfils, then retries the call with the answer in
 *   `inputResponses` (`modernElicitation`; the gateway turns `InputRequiredSignal` into the result).
 * Free of the SDK: this module is read on every call.
 */
/** A form-mode elicitation: the message shown and the flat JSON Schema of the form (one string field here). */
export interface ElicitForm {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<
      string,
      { type: 'string'; title?: string; description?: string; enum?: string[]; minLength?: number; maxLength?: number }
    >;
    required?: string[];
  };
}

/** What the person did with a form (MCP `ElicitResult`). */
type ElicitAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' | 'cancel' };

/** The way a tool asks the person of one request. */
export interface Elicitation {
  /**
   * Asks `form` under `key` (a name unique for the question, such as its id) and resolves with the
   * person's answer.
   * @throws InputRequiredSignal on the 2026-07-28 era when the request does not carry the answer yet.
   */
  ask(key: string, form: ElicitForm): Promise<ElicitAnswer>;
}

/**
 * Thrown by a 2026-07-28 `ask` whose answer is not in the request: the gateway answers the call with
 * an `input_required` result that asks `form` under `key`.
 */
export class InputRequiredSignal extends Error {
  constructor(
    readonly key: string,
    readonly form: ElicitForm,
  ) {
    super('input required');
    this.name = 'InputRequiredSignal';
  }
}

/** The `_meta` key of the 2026-07-28 envelope that carries the client's capabilities (the SDK's `CLIENT_CAPABILITIES_META_KEY`). */
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * True when `capabilities` (a client's, from `initialize` or the 2026-07-28 envelope) declare
 * form-mode elicitation: `elicitation` is an object that names `form`, or names no mode at all
 * (MCP 2025-11-25: an empty `elicitation` object means form mode).
 */
export function declaresFormElicitation(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  if (elicitation === null || typeof elicitation !== 'object' || Array.isArray(elicitation)) return false;
  return 'form' in elicitation || !('url' in elicitation);
}

/**
 * The elicitation of a 2026-07-28 `tools/call` whose envelope declares form elicitation, else
 * undefined. Its `ask` resolves with the answer the retried request carries in
 * `params.inputResponses[key]`, and throws `InputRequiredSignal` when there is none.
 */
export function modernElicitation(params: Record<string, unknown> | undefined): Elicitation | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined;
  if (!declaresFormElicitation(meta?.[CAPABILITIES_KEY])) return undefined;
  const responses = params?.inputResponses;
  return {
    ask(key, form) {
      const response =
        responses && typeof responses === 'object' ? (responses as Record<string, unknown>)[key] : undefined;
      const answer = elicitAnswer(response);
      if (!answer) return Promise.reject(new InputRequiredSignal(key, form));
      return Promise.resolve(answer);
    },
  };
}

/** The SDK `Server`'s way of asking (`Server.elicitInput`), as far as `legacyElicitation` needs it. */
export type ElicitInput = (
  form: ElicitForm & { mode: 'form' },
  options: { signal?: AbortSignal; timeout: number },
) => Promise<{ action: string; content?: Record<string, unknown> }>;

/**
 * The elicitation of a 2025-11-25 request over stdio: `elicitInput` sends `elicitation/create` and
 * resolves with the client's response. A person who does not answer within `timeoutMs`, or a
 * request that ends first (`signal`), counts as `cancel`.
 */
export function legacyElicitation(
  elicitInput: ElicitInput,
  signal: () => AbortSignal | undefined,
  timeoutMs: number,
): Elicitation {
  return {
    async ask(_key, form) {
      try {
        const result = await elicitInput({ mode: 'form', ...form }, { signal: signal(), timeout: timeoutMs });
        return elicitAnswer(result) ?? { action: 'cancel' };
      } catch {
        return { action: 'cancel' };
      }
    },
  };
}

/** `value` as an answer when it is an `ElicitResult` (accept with its content, decline, cancel), else undefined. */
function elicitAnswer(value: unknown): ElicitAnswer | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept') return undefined;
  return {
    action,
    content:
      content && typeof content === 'object' && !Array.isArray(content) ? (content as Record<string, unknown>) : {},
  };
}
