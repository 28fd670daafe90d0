/**
 * The gate every JSON-RPC request passes, on both transports: authentication, then the request
 * rate of the caller's plan (checks run in this order: auth before rate limit).
 *
 * Which limit counts a request (docs/contract.md#limits-and-plans):
 * - `tools/call` counts against the plan's `requestsPerMinute`, per API key (per user for OAuth
 *   access tokens), on both transports;
 * - protocol housekeeping (`initialize`, `ping`, `tools/list`, notifications) over HTTP counts
 *   against its own per-key bound, `HOUSEKEEPING_FACTOR` times the plan's rate, so a host's health
 *   checks keep working while its tool calls are limited;
 * - a request whose token is missing or refused counts against a per-client-address bound; past
 *   it the address gets -32005 (`data.scope = "unauthenticated"`) instead of -32001;
 * - over HTTP, requests still being read count against their token's user, or, without a valid
 *   token, against the client address (`readingKey`). The client address is the one the
 *   transport resolved (`client-address.ts`: behind a trusted proxy, from `X-Forwarded-For`).
 */
import { MESSAGES, rateLimited, ServiceError } from '../errors.js';
import { limitsFor, type PlanTable } from '../limits/plans.js';
import type { RateDecision, RequestRateLimiter } from '../limits/request-rate-limiter.js';
import type { Logger } from '../logger.js';
import type { Caller } from './caller.js';
import type { TokenService } from './token-service.js';

/** An admitted request: who calls, and the rate window it was counted in. */
export interface Admission {
  caller: Caller;
  /** The rate window that counted the request; absent for a stdio `tools/list` (not counted). */
  rate?: RateDecision;
}

/** Housekeeping requests allowed per key and minute, as a multiple of the plan's tool-call rate. */
const HOUSEKEEPING_FACTOR = 10;

/** Default bound on requests with a missing or refused token, per client address and minute. */
const DEFAULT_UNAUTHENTICATED_PER_MINUTE = 120;

/** What the limit that refused a request counts (`error.data.scope`). */
export type RateScope = 'requests' | 'housekeeping';

/** A refusal by a per-key rate limit, with the window for the response headers. */
export class RateLimitedError extends ServiceError {
  constructor(
    readonly rate: RateDecision,
    scope: RateScope = 'requests',
  ) {
    super('rate_limited', MESSAGES.rateLimited, {
      scope,
      limit: rate.limit,
      windowSeconds: 60,
      resetAt: rate.resetAt,
      retryAfterSeconds: rate.retryAfterSeconds,
    });
  }
}

/** Where a request came from, for the admission policy. */
export interface RequestOrigin {
  transport: 'http' | 'stdio';
  /** The presented API token (HTTP: the Bearer token; stdio: `SVC_API_TOKEN`). */
  token: string | undefined | null;
  /** The client's address (HTTP only), for the bound on unauthenticated requests. */
  address?: string | undefined;
  /** The caller `token` already authenticated as for this request (`readingKey`), if it did. */
  caller?: Caller | null | undefined;
}

/** What `readingKey` gives: the key a request still being read counts against, and its caller when its token authenticated. */
export interface Reading {
  key: string;
  caller: Caller | null;
}

/** Decides who may send `method`: the admission, null when the method needs no caller, or a ServiceError (the gateway's `AdmissionPolicy`). */
type Policy = (method: string) => Promise<Admission | null>;

/** Options of the gate; every field has a default. */
export interface RequestGateOptions {
  /** Requests with a missing or refused token per client address and minute (default 120). */
  unauthenticatedPerMinute?: number;
  logger?: Logger;
}

/** Authentication then rate limit, for every JSON-RPC request. */
export class RequestGate {
  private readonly unauthenticatedPerMinute: number;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly tokens: TokenService,
    private readonly limiter: RequestRateLimiter,
    private readonly plans: PlanTable,
    options: RequestGateOptions = {},
  ) {
    this.unauthenticatedPerMinute = options.unauthenticatedPerMinute ?? DEFAULT_UNAUTHENTICATED_PER_MINUTE;
    this.logger = options.logger;
  }

  /**
   * Counts one action of an already authenticated caller (a web console page or form, a tool call
   * the gateway answers from its reply memo) against the plan's request rate, like a tool call:
   * the admission itself when the limiter decided from memory at once (no promise: the reply
   * memo's hit is one synchronous step), else a promise of it.
   * @throws RateLimitedError (-32005, `data.scope = "requests"`) over the plan's rate: at once, or
   *   as the promise's rejection.
   */
  admitCaller(caller: Caller): Required<Admission> | Promise<Required<Admission>> {
    return this.count(caller, 'requests');
  }

  /**
   * Counts one sign-in attempt of the web console from `address` against the bound on
   * unauthenticated requests (per client address and minute), so credentials cannot be guessed
   * quickly there either.
   * @throws ServiceError -32005 (`data.scope = "unauthenticated"`) past the bound.
   */
  async countSignInAttempt(address: string): Promise<void> {
    const rate = await this.limiter.consume(`address:${address}`, this.unauthenticatedPerMinute, 60);
    if (!rate.allowed)
      throw rateLimited({
        scope: 'unauthenticated',
        limit: rate.limit,
        windowSeconds: 60,
        resetAt: rate.resetAt,
        retryAfterSeconds: rate.retryAfterSeconds,
      });
  }

  /**
   * The key a request still being read counts against (the transport's bound on such requests):
   * `user:<id>` when `token` authenticates, else `address:<client address>`, with the caller it
   * authenticated (pass it to `policy` as `caller`, so the token is looked up once per request).
   * Looks only at the token (no rate is counted, nothing is logged); never rejects. A token in
   * the token cache is answered at once (no promise, `TokenService.authenticate`).
   */
  readingKey(token: string | undefined | null, address: string): Reading | Promise<Reading> {
    if (!token) return { key: `address:${address}`, caller: null };
    const caller = this.tokens.authenticate(token);
    if (!(caller instanceof Promise)) return { key: readingKeyOf(caller), caller };
    return caller.then(
      (known) => ({ key: readingKeyOf(known), caller: known }),
      // A refused token is anonymous.
      () => ({ key: `address:${address}`, caller: null }),
    );
  }

  /**
   * The admission policy of one request (see the file comment).
   * stdio: only `tools/call` needs a caller (initialize, ping and tools/list work without a
   * token, and the one local client has the process to itself). HTTP: every request needs one.
   */
  policy(origin: RequestOrigin): Policy {
    if (origin.transport === 'stdio') {
      return async (method) => {
        if (method === 'notifications/cancelled')
          this.logger?.info({ transport: 'stdio' }, 'client cancelled a request');
        // The list names the caller's tools (a read-only token's are fewer); it needs no token.
        if (method === 'tools/list')
          return origin.token
            ? Promise.resolve(this.tokens.authenticate(origin.token)).then(
                (caller) => ({ caller }),
                () => null,
              )
            : null;
        if (method !== 'tools/call') return null;
        return this.count(await this.authenticate(origin), 'requests');
      };
    }
    const admitCaller = async (caller: Caller, method: string): Promise<Admission> => {
      if (method === 'notifications/cancelled')
        this.logger?.info({ user: caller.userName, address: origin.address }, 'client cancelled a request');
      return this.count(caller, method === 'tools/call' ? 'requests' : 'housekeeping');
    };
    // The transport usually authenticated the token already (`readingKey`): no wait for it then.
    const known = origin.caller;
    if (known) return (method) => admitCaller(known, method);
    return async (method) => admitCaller(await this.authenticateHttp(origin), method);
  }

  private async authenticate(origin: RequestOrigin): Promise<Caller> {
    try {
      return await this.tokens.authenticate(origin.token);
    } catch (error) {
      this.logger?.warn(
        { transport: origin.transport, address: origin.address, tokenPresented: Boolean(origin.token) },
        'authentication failed',
      );
      throw error;
    }
  }

  private async authenticateHttp(origin: RequestOrigin): Promise<Caller> {
    try {
      return await this.tokens.authenticate(origin.token);
    } catch (error) {
      const address = origin.address ?? 'unknown';
      const rate = await this.limiter.consume(`address:${address}`, this.unauthenticatedPerMinute, 60);
      if (!rate.allowed) {
        // Logged once per window, so that a flood does not flood the log too.
        if (rate.remaining === 0 && rate.firstRefusal)
          this.logger?.warn({ address }, 'unauthenticated requests from this address are limited');
        throw rateLimited({
          scope: 'unauthenticated',
          limit: rate.limit,
          windowSeconds: 60,
          resetAt: rate.resetAt,
          retryAfterSeconds: rate.retryAfterSeconds,
        });
      }
      this.logger?.warn(
        { transport: origin.transport, address, tokenPresented: Boolean(origin.token) },
        'authentication failed',
      );
      throw error;
    }
  }

  /** Counts a request of `caller` against `scope`'s limit: at once when the limiter decides at once (see `admitCaller`). */
  private count(caller: Caller, scope: RateScope): Required<Admission> | Promise<Required<Admission>> {
    const { requestsPerMinute } = limitsFor(this.plans, caller.plan);
    const key = caller.rateKey ?? caller.tokenId;
    const rate =
      scope === 'requests'
        ? this.limiter.consume(key, requestsPerMinute, 60)
        : this.limiter.consume(`housekeeping:${key}`, requestsPerMinute * HOUSEKEEPING_FACTOR, 60);
    return rate instanceof Promise
      ? rate.then((decided) => admitted(caller, decided, scope))
      : admitted(caller, rate, scope);
  }
}

/**
 * The admission of `caller` by `rate`.
 * @throws RateLimitedError when `rate` refused the request.
 */
function admitted(caller: Caller, rate: RateDecision, scope: RateScope): Required<Admission> {
  if (!rate.allowed) throw new RateLimitedError(rate, scope);
  return { caller, rate };
}

/** The key a caller's requests still being read count against: `user:<id>`, made once per caller object. */
function readingKeyOf(caller: Caller): string {
  let key = readingKeys.get(caller);
  if (key === undefined) {
    key = `user:${caller.userId}`;
    readingKeys.set(caller, key);
  }
  return key;
}
const readingKeys = new WeakMap<Caller, string>();
