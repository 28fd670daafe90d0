/**
 * Request rate limiting (docs/contract.md#limits-and-plans), behind one interface so that
 * the backend can change without touching the gate: process memory for a private store, the
 * SQLite store itself when several processes may serve one data dir (`store-rate-limiter.ts`).
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** The outcome of counting one request. */
export interface RateDecision {
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window (0 when refused). */
  remaining: number;
  /** Unix time (seconds) at which the current window ends. */
  resetAt: number;
  /** Whole seconds to wait before retrying (at least 1); meaningful when refused. */
  retryAfterSeconds: number;
  /** True for the first refusal of a window (to log a refusal once, not once per request). */
  firstRefusal?: boolean;
}

/** Counts requests per key in fixed windows. */
export interface RequestRateLimiter {
  /**
   * Counts one request of `key` against `limit` per `windowSeconds`: the decision itself when it
   * is made from memory at once (the store's limiter, while it holds a lease of the window), else
   * a promise of it. Never throws for a refusal.
   */
  consume(key: string, limit: number, windowSeconds: number): RateDecision | Promise<RateDecision>;
}

/** The in-process limiter (rate-limiter-flexible): exact within one process, not shared with other processes. */
export class MemoryRequestRateLimiter implements RequestRateLimiter {
  private readonly limiters = new Map<string, RateLimiterMemory>();

  async consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const id = `${limit}/${windowSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix: id });
      this.limiters.set(id, limiter);
    }
    try {
      return decision(true, limit, await limiter.consume(key, 1));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(false, limit, rejection);
      throw rejection;
    }
  }
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetAt: Math.ceil((Date.now() + res.msBeforeNext) / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    ...(!allowed && { firstRefusal: res.consumedPoints === limit + 1 }),
  };
}
