/**
 * The gate every authenticated JSON-RPC request passes, on both transports: authentication,
 * then the request rate of the caller's plan (design section 3: auth before rate limit).
 */
import { MESSAGES, ServiceError } from '../errors.js';
import { limitsFor, type PlanTable } from '../limits/plans.js';
import type { RateDecision, RequestRateLimiter } from '../limits/request-rate-limiter.js';
import type { Caller } from './caller.js';
import type { TokenService } from './token-service.js';

/** An admitted request: who calls, and the rate window it was counted in. */
export interface Admission {
  caller: Caller;
  rate: RateDecision;
}

/** A refusal by the rate limiter, with the window for the response headers. */
export class RateLimitedError extends ServiceError {
  constructor(readonly rate: RateDecision) {
    super('rate_limited', MESSAGES.rateLimited, {
      scope: 'requests',
      limit: rate.limit,
      windowSeconds: 60,
      resetAt: rate.resetAt,
      retryAfterSeconds: rate.retryAfterSeconds,
    });
  }
}

/** Authentication then rate limit, for every authenticated JSON-RPC request (design section 3 order). */
export class RequestGate {
  constructor(
    private readonly tokens: TokenService,
    private readonly limiter: RequestRateLimiter,
    private readonly plans: PlanTable,
  ) {}

  /**
   * Authenticates `token` and counts the request against its key.
   * @throws ServiceError `unauthenticated` (-32001) for a bad token;
   *   RateLimitedError (-32005, `data.scope = "requests"`) over the plan's rate.
   */
  async admit(token: string | undefined | null): Promise<Admission> {
    const caller = this.tokens.authenticate(token);
    const { requestsPerMinute } = limitsFor(this.plans, caller.plan);
    const rate = await this.limiter.consume(caller.tokenId, requestsPerMinute, 60);
    if (!rate.allowed) throw new RateLimitedError(rate);
    return { caller, rate };
  }
}
