/**
 * stdio transport (docs/cli.md#command-line): newline-delimited JSON-RPC on stdin/stdout, as MCP hosts
 * (Claude Desktop, Claude Code, Cursor) launch it. The token is read once from `SVC_API_TOKEN`;
 * without it the server still starts and lists its tools, and every tool call answers -32001.
 *
 * Lines go through the same gateway as HTTP. (The SDK's stdio transport drops a line it cannot
 * parse without answering; the contract wants -32700 with id null, so framing is done here.)
 */
import type { Readable, Writable } from 'node:stream';
import type { RequestGate } from '../auth/request-gate.js';
import type { Logger } from '../logger.js';
import type { JsonRpcGateway } from '../mcp/json-rpc-gateway.js';
import type { AdmissionPolicy, RequestChannel } from '../mcp/request-channel.js';
import { DEFAULTS } from '../core/defaults.js';
import { invalidRequest, toJsonRpcError } from '../errors.js';
import { readBoundedLines } from '../io/bounded-lines.js';
import type { JsonRpcReply } from '../mcp/in-process-transport.js';
import { replyJson } from '../mcp/reply-json.js';

/** What the stdio transport works with (the whole `App` satisfies it). */
export interface StdioServerDeps {
  gateway: Pick<JsonRpcGateway, 'handleText'>;
  gate: Pick<RequestGate, 'policy'>;
  logger: Logger;
}

/** Streams default to the process's stdin and stdout. */
export interface StdioServerOptions {
  /** The API token configured in the host (env `SVC_API_TOKEN`). */
  token: string | undefined;
  input?: Readable;
  output?: Writable;
  /** Longest accepted line, in bytes of UTF-8 (`--body-limit`, default 1 MiB); a longer one is refused unread. */
  lineLimit?: number;
  /**
   * Called once, after the first reply is written (the answer to `initialize`) or the first
   * message is handled without one: start-up work that can wait starts then.
   */
  onFirstReply?: () => void;
  /**
   * Messages after the first are handled once this settles (in order): what they answer may
   * depend on that start-up work (preview links name the preview listener's port).
   */
  laterMessagesAfter?: Promise<unknown>;
  /**
   * The first message, already answered by the early start (docs/performance.md "Start-up time"): `line` is
   * handled first, as every message is, but its reply is not written again (`reply` is what was
   * written: a different one is logged as an error). `input` then carries what came after it.
   */
  answered?: { line: string; reply: string };
}

/**
 * Serves MCP on the given streams until the input ends.
 * @returns a promise that settles when the input has ended and every reply is written.
 */
export function serveStdio(app: StdioServerDeps, options: StdioServerOptions): Promise<void> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const lineLimit = options.lineLimit ?? DEFAULTS.bodyLimitBytes;
  const token = options.token;
  const admit = app.gate.policy({ transport: 'stdio', token });
  const inFlight = new Set<Promise<void>>();
  const channel = stdioChannel(output);

  let onFirstReply = options.onFirstReply;
  const firstDone = () => {
    if (onFirstReply) {
      const first = onFirstReply;
      onFirstReply = undefined;
      first();
    }
  };
  const write = (value: JsonRpcReply) => {
    // A kept tool result's JSON text is spliced in, not serialised again (`mcp/reply-json.ts`).
    output.write(`${replyJson(value)}\n`);
    firstDone();
  };

  let later = false;
  const handle = (line: string) => {
    if (line.trim().length === 0) return;
    const run = () =>
      app.gateway
        .handleText(line, admit, undefined, channel)
        .then((reply) => {
          if (reply.body) write(reply.body);
        })
        .catch((error: unknown) => app.logger.error({ err: error }, 'stdio message failed'));
    const held = later && laterMessages;
    later = true;
    const work: Promise<void> = (held ? held.then(run, run) : run().finally(firstDone)).finally(() =>
      inFlight.delete(work),
    );
    inFlight.add(work);
  };

  let laterMessages = options.laterMessagesAfter;
  const answered = options.answered;
  if (answered) {
    // The server learns of the client from it (capabilities, version), and later messages wait for it.
    later = true;
    const replayed: Promise<void> = replayAnswered(app, admit, channel, answered).finally(() =>
      inFlight.delete(replayed),
    );
    inFlight.add(replayed);
    laterMessages = Promise.all([replayed, laterMessages]);
    firstDone();
  }

  // Every reply is bounded by the gateway's deadline, so the wait at the end of input is too.
  return readBoundedLines(input, {
    maxLineBytes: lineLimit,
    onLine: ({ text, droppedBytes }) => {
      if (droppedBytes > 0) {
        write(lineTooLong(lineLimit));
        return;
      }
      handle(text);
    },
  }).then(() => {
    // The host has gone: calls that wait for it (svc_get_session's waitSeconds) answer now.
    channel.end();
    return Promise.allSettled([...inFlight]).then(() => undefined);
  });
}

/**
 * Handles the first line, already answered by the early start (docs/performance.md "Start-up
 * time"), as every line is, so that the server learns of the client (capabilities, version); its
 * reply is not written again, but logged as an error when it is not `answered.reply`, byte for byte.
 * @returns a promise that settles once the line is handled; it never rejects (a failure is logged).
 */
function replayAnswered(
  app: StdioServerDeps,
  admit: AdmissionPolicy,
  channel: RequestChannel,
  answered: { line: string; reply: string },
): Promise<void> {
  return app.gateway
    .handleText(answered.line, admit, undefined, channel)
    .then((reply) => {
      if (JSON.stringify(reply.body) !== answered.reply)
        app.logger.error(
          { early: answered.reply, server: reply.body },
          "the early answer to the first message differs from the server's",
        );
    })
    .catch((error: unknown) => app.logger.error({ err: error }, 'stdio message failed'));
}

/**
 * The reply to a line longer than the limit, which is refused unread: -32600 `Invalid Request`
 * with `data.reason = "body_too_large"` and `data.limitBytes`, id null.
 * @param lineLimit the longest accepted line, in bytes of UTF-8.
 */
function lineTooLong(lineLimit: number): JsonRpcReply {
  return {
    jsonrpc: '2.0',
    id: null,
    error: toJsonRpcError(invalidRequest({ reason: 'body_too_large', limitBytes: lineLimit })),
  };
}

/**
 * What stdio offers each request besides its reply: notifications (`notifications/progress`) are
 * written as lines before the reply, and a request's signal aborts when the input ends or the
 * client cancels that request (`notifications/cancelled` with its id).
 */
function stdioChannel(output: Writable): RequestChannel & { end(): void } {
  const ended = new AbortController();
  const requests = new Map<string | number, { controller: AbortController | undefined; cancelled: boolean }>();
  return {
    // The process's one client: what its `initialize` declared.
    connection: { apps: false },
    notify: (message) => {
      if (!ended.signal.aborted) output.write(`${JSON.stringify(message)}\n`);
    },
    request: (message) => {
      if (!ended.signal.aborted) output.write(`${JSON.stringify(message)}\n`);
    },
    signal: ended.signal,
    requestSignal: (id) => {
      // The request's controller and combined signal are made only when a tool reads the signal
      // (a wait); a cancel that comes first is remembered.
      const own = { controller: undefined as AbortController | undefined, cancelled: false };
      requests.set(id, own);
      let combined: AbortSignal | undefined;
      return {
        get signal() {
          if (!combined) {
            own.controller = new AbortController();
            if (own.cancelled) own.controller.abort();
            combined = AbortSignal.any([ended.signal, own.controller.signal]);
          }
          return combined;
        },
        release: () => {
          if (requests.get(id) === own) requests.delete(id);
        },
      };
    },
    cancel: (id) => {
      const own = requests.get(id);
      if (!own) return;
      own.cancelled = true;
      own.controller?.abort();
    },
    end: () => ended.abort(),
  };
}
