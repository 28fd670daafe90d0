/**
 * `POST /mcp` after its guards (host check, protocol version, declared body size; docs/architecture.md
 * "The HTTP pipeline"): the body is read within the bound on requests being read, then each
 * JSON-RPC message is authenticated and rate limited by the gateway's admission (per message:
 * `initialize` and discovery need no token), holding one of the server's request slots
 * (docs/contract.md#tokens-and-security).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientAddressOf } from '../auth/client-address.js';
import type { RequestGate } from '../auth/request-gate.js';
import type { Caller } from '../auth/caller.js';
import { rateLimited } from '../errors.js';
import { BODY_ABORTED, BODY_TOO_LARGE, readBody, type BodyText } from '../io/request-body.js';
import type { RateDecision } from '../limits/request-rate-limiter.js';
import type { JsonRpcGateway } from '../mcp/json-rpc-gateway.js';
import type { PublicUrl } from '../services/public-url.js';
import type { RouteHandler } from '../io/route-guard.js';
import {
  bearerToken,
  bodyTooLarge,
  mcpClient,
  protocolHeaders,
  rateHeaders,
  resourceMetadataUrl,
  sendError,
  sendReply,
} from './mcp-replies.js';
import { RequestTurn, type OneLook } from './request-turn.js';
import { SlotReleases } from './slot-releases.js';
import { sseReplyChannel } from './sse-reply.js';

/** The server's request slots: authenticated MCP requests handled at once (`maxConcurrentRequests`). */
export class RequestSlots {
  /** Slots taken now. */
  inFlight = 0;

  constructor(readonly max: number) {}

  /** Whether no authenticated request could be admitted now (`/healthz` says `request_slots_full`). */
  get full(): boolean {
    return this.inFlight >= this.max;
  }
}

/** What the `/mcp` handler works with. */
export interface McpRouteOptions {
  gateway: Pick<JsonRpcGateway, 'parseHttp' | 'handleValue'>;
  gate: Pick<RequestGate, 'policy' | 'readingKey' | 'admitCaller'>;
  clientAddress: ClientAddressOf;
  publicUrl: Pick<PublicUrl, 'get'>;
  /** Largest body, in bytes: a longer one is refused with 413 as it streams in. */
  bodyLimit: number;
  slots: RequestSlots;
  /** Requests still being read or authenticated per user (valid token) or client address (none); more get 429 `client`. */
  maxUnauthenticated: number;
  /** Whether this listener serves OAuth: a 401 then names the protected resource metadata. */
  oauth: boolean;
  /** The store's `oneLook`: a turn's requests share one look at other processes' commits (request-turn.ts). */
  oneLook: OneLook;
}

/** The `/mcp` POST handler. */
export function mcpRoute(options: McpRouteOptions): RouteHandler {
  const readBounded = boundedReader(options);
  const slotReleases = new SlotReleases();
  // Requests arriving in one turn start together, after one look at other processes' commits (request-turn.ts).
  const turn = new RequestTurn(options.oneLook);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const address = options.clientAddress(req);
    const token = bearerToken(req.headers.authorization);
    // A token in the token cache is known at once: no promise to wait on (docs/architecture.md "The reply memo").
    const known = options.gate.readingKey(token, address);
    const reading = known instanceof Promise ? await known : known;
    // A body received whole already is read at once: no promise to wait on.
    const read = readBounded(req, res, reading.key);
    const body = read instanceof Promise ? await read : read;
    if (body === undefined) return;
    const caller = reading.caller;
    // The gateway's first stage: a call its reply memo holds is answered there, counted by the
    // rate limiter first, without a request slot (it never waits on the store); a full server
    // sends every call the slot's way, which refuses it.
    const first = options.slots.full ? null : caller;
    const parsed = options.gateway.parseHttp(body, first, () => options.gate.admitCaller(first!));
    if ('reply' in parsed) {
      // A hit whose rate the limiter decided from memory is a reply already: no promise to wait on.
      const reply = parsed.reply instanceof Promise ? await parsed.reply : parsed.reply;
      if (!res.destroyed)
        sendReply(res, reply, {
          tokenPresented: token !== undefined,
          mcp: mcpClient(req.headers['mcp-protocol-version']),
          resourceMetadata: options.oauth ? resourceMetadataUrl(options.publicUrl.get()) : null,
        });
      return;
    }
    await answerInSlot(options, slotReleases, { req, res, value: parsed.value, token, address, caller });
  };
  return (req, res) => turn.run(() => handle(req, res));
}

/**
 * Reads a body within the bound on requests still being read or authenticated, per user (valid
 * token) or client address (none): anonymous clients cannot fill the server's request slots, which
 * are taken only once a caller is known, nor lock out the users behind the same proxy. Resolves
 * undefined when the request was answered (429, 413) or aborted.
 */
function boundedReader(
  options: McpRouteOptions,
): (req: IncomingMessage, res: ServerResponse, key: string) => string | undefined | Promise<string | undefined> {
  const unauthenticated = new Map<string, number>();
  const max = options.maxUnauthenticated;
  const checked = (res: ServerResponse, body: BodyText): string | undefined => {
    if (body === BODY_ABORTED) return undefined;
    if (body === BODY_TOO_LARGE) {
      bodyTooLarge(res, options.bodyLimit);
      return undefined;
    }
    return body;
  };
  return (req, res, key) => {
    const pending = unauthenticated.get(key) ?? 0;
    if (pending >= max) {
      res.setHeader('Retry-After', '1');
      res.setHeader('Connection', 'close');
      sendError(res, rateLimited({ scope: 'client', limit: max, retryAfterSeconds: 1 }));
      return undefined;
    }
    const read = readBody(req, options.bodyLimit);
    // A body received whole already is never pending: no count to keep.
    if (!(read instanceof Promise)) return checked(res, read);
    unauthenticated.set(key, pending + 1);
    return read.then((body) => {
      const left = (unauthenticated.get(key) ?? 1) - 1;
      if (left <= 0) unauthenticated.delete(key);
      else unauthenticated.set(key, left);
      return checked(res, body);
    });
  };
}

/** A read `/mcp` request. */
interface ReadMcpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The parsed body (`JsonRpcGateway.parseHttp`). */
  value: unknown;
  token: string | undefined;
  address: string;
  caller: Caller | null;
}

/**
 * The one path of a read body: a request slot is taken once the caller is authenticated (429
 * `server` when none is free), and given back when the reply is sent or the client goes away,
 * whichever comes first.
 */
async function answerInSlot(
  options: McpRouteOptions,
  slotReleases: SlotReleases,
  request: ReadMcpRequest,
): Promise<void> {
  const { req, res, token } = request;
  const { slots } = options;
  let holding = false;
  const release = () => {
    if (holding) {
      holding = false;
      slots.inFlight--;
    }
  };
  // One close listener per connection, not per request (slot-releases.ts).
  slotReleases.hold(req.socket, release);
  const policy = options.gate.policy({ transport: 'http', token, address: request.address, caller: request.caller });
  let rate: RateDecision | undefined;
  const admit = async (method: string) => {
    const admission = await policy(method);
    if (slots.full) throw rateLimited({ scope: 'server', limit: slots.max, retryAfterSeconds: 1 });
    slots.inFlight++;
    holding = true;
    rate = admission?.rate;
    return admission;
  };
  // Progress notifications turn the reply into an SSE stream for a client that accepts one
  // (sse-reply.ts); the stream's headers carry the rate window like any other answer.
  const channel = sseReplyChannel(req, res, () => rateHeaders(rate));
  try {
    const reply = await options.gateway.handleValue(request.value, admit, protocolHeaders(req), channel);
    if (channel.streaming) channel.finish(reply.body);
    else if (!res.destroyed) {
      sendReply(res, reply, {
        tokenPresented: token !== undefined,
        mcp: mcpClient(req.headers['mcp-protocol-version']),
        resourceMetadata: options.oauth ? resourceMetadataUrl(options.publicUrl.get()) : null,
      });
    }
  } finally {
    slotReleases.drop(req.socket, release);
    release();
  }
}
