/**
 * The request limiter shared by every process that serves one data dir (docs/contract.md "Limits and
 * plans"): fixed windows counted in the store's `rate_limits` table (created by the shipped
 * migrations), so N processes never allow N times the limit.
 *
 * A process does not write once per request: it claims a few counts of a key's window at a time
 * (a lease, 1/16 of the limit, at most 256, at least 1) with one atomic UPSERT, and spends them
 * from memory. The store's count is the sum of every process's claims and never passes the limit,
 * so all processes together allow at most the limit; one process alone allows exactly the limit.
 * The price: while one process holds unspent counts of a key's window (fewer than a lease), another
 * process may refuse that key a little before the limit. A key refused in its window is refused
 * from memory until the window ends, without writing. If the store fails (locked past the busy
 * timeout), an in-memory limiter answers instead, so a store problem never refuses every request.
 */
import type { RateWindows } from '../store/store.js';
import { MemoryRequestRateLimiter, type RateDecision, type RequestRateLimiter } from './request-rate-limiter.js';

/** Most counts claimed from the store at a time (see `leaseSize`). */
const MAX_LEASE = 256;
/** Default share of the limit claimed at a time: 1/16 (a SQLite data dir's few processes). */
const DEFAULT_LEASE_SHARE = 16;
/** Claims between two sweeps of expired rows. */
const SWEEP_EVERY = 1000;

/** What this process holds of one key's window. */
interface Lease {
  /** End of the window, Unix ms. */
  expire: number;
  /** Claimed counts not spent yet. */
  left: number;
  /** The store's count (capped at the limit) after this process's last claim. */
  claimed: number;
  /** True once a request was refused in this window (logged once). */
  exhausted: boolean;
  /** True when the last claim got nothing: the store's count is at the limit. */
  dry: boolean;
}

/** A request limiter whose counters live in the SQLite store, shared across processes. */
export class StoreRequestRateLimiter implements RequestRateLimiter {
  private readonly leases = new Map<string, Lease>();
  /** Per window, the end of the line of its requests waiting for a claim (see `consume`): one claim of a window at a time. */
  private readonly lines = new Map<string, Promise<void>>();
  private readonly insurance = new MemoryRequestRateLimiter();
  private claims = 0;

  private readonly leaseShare: number;

  /**
   * @param windows the store's shared windows (`store.rateWindows`, or the PostgreSQL limiter's).
   * @param options `leaseShare`: a claim takes 1/leaseShare of the limit (at least 1, at most 256;
   *   default 16). Each process may hold up to one lease minus one count unspent, which other
   *   processes cannot have: the smaller the share, the fewer claims and the more that may be lost.
   */
  constructor(
    private readonly windows: RateWindows,
    options: { leaseShare?: number } = {},
  ) {
    this.leaseShare = options.leaseShare ?? DEFAULT_LEASE_SHARE;
  }

  /**
   * Decides one request of `key`, in the order the requests of `key` arrived here: from memory at
   * once while nobody of `key` waits for a claim (the decision itself, no promise); otherwise
   * behind the ones waiting, so a lease a claim brings serves them first, never a request that
   * came after them (a claim waits for the store, which other requests may hold meanwhile).
   */
  consume(key: string, limit: number, windowSeconds: number): RateDecision | Promise<RateDecision> {
    const id = `${limit}/${windowSeconds}:${key}`;
    const line = this.lines.get(id);
    if (!line) {
      const now = Date.now();
      const lease = this.liveLease(id, now);
      // Decided from memory, in one step: concurrent requests share the lease object.
      if (lease && decidable(lease)) return take(lease, limit, now);
    }
    const turn = (line ?? Promise.resolve()).then(() => this.decide(id, key, limit, windowSeconds));
    const end = turn.then(
      () => undefined,
      () => undefined,
    );
    this.lines.set(id, end);
    void end.then(() => {
      if (this.lines.get(id) === end) this.lines.delete(id);
    });
    return turn;
  }

  /** Decides the request at the head of `id`'s line: from the lease, after a claim when it has none to give. */
  private async decide(id: string, key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    for (;;) {
      const now = Date.now();
      const lease = this.liveLease(id, now);
      if (lease && decidable(lease)) return take(lease, limit, now);
      if (!(await this.renew(id, lease, limit, windowSeconds, now)))
        return this.insurance.consume(key, limit, windowSeconds);
    }
  }

  /** The lease this process holds of `id`'s current window, if any (an ended one is dropped). */
  private liveLease(id: string, now: number): Lease | undefined {
    const lease = this.leases.get(id);
    if (lease && lease.expire <= now) {
      this.leases.delete(id);
      return undefined;
    }
    return lease;
  }

  /** Claims the next lease of `id`'s window; undefined when the store cannot answer. */
  private async renew(
    id: string,
    current: Lease | undefined,
    limit: number,
    windowSeconds: number,
    now: number,
  ): Promise<Lease | undefined> {
    const size = Math.min(MAX_LEASE, Math.max(1, Math.floor(limit / this.leaseShare)));
    if (++this.claims % SWEEP_EVERY === 0) void this.sweep(now);
    let row: { points: number; expire: number } | undefined;
    try {
      row = await this.windows.claim({ key: id, size, expire: now + windowSeconds * 1000, now, limit });
    } catch {
      if (current) this.leases.delete(id);
      return undefined;
    }
    if (!row) return undefined;
    const before = row.points - size;
    const granted = Math.max(0, Math.min(size, limit - before));
    const held = this.leases.get(id) ?? current;
    const lease: Lease = {
      expire: row.expire,
      left: (held && held.expire === row.expire ? held.left : 0) + granted,
      claimed: Math.min(row.points, limit),
      exhausted: held !== undefined && held.expire === row.expire && held.exhausted,
      dry: granted === 0,
    };
    if (this.leases.size >= 10_000 && !this.leases.has(id)) this.leases.clear();
    this.leases.set(id, lease);
    return lease;
  }

  /** Deletes windows that ended over an hour ago; a failure (store busy or closed) waits for the next sweep. */
  private async sweep(now: number): Promise<void> {
    try {
      await this.windows.deleteExpired(now - 3_600_000);
    } catch {
      // Best effort: an ended window is started again by the next claim anyway.
    }
  }
}

/** True when `lease` decides a request without a claim: a count left, or a window already refused or dry. */
function decidable(lease: Lease): boolean {
  return lease.left > 0 || lease.exhausted || lease.dry;
}

/** Spends one count of `lease`, or refuses when it has none left. */
function take(lease: Lease, limit: number, now: number): RateDecision {
  if (lease.left === 0) {
    const first = !lease.exhausted;
    lease.exhausted = true;
    return decision(false, limit, 0, lease.expire, now, first);
  }
  lease.left--;
  return decision(true, limit, Math.max(0, limit - (lease.claimed - lease.left)), lease.expire, now, false);
}

function decision(
  allowed: boolean,
  limit: number,
  remaining: number,
  expire: number,
  now: number,
  firstRefusal: boolean,
): RateDecision {
  return {
    allowed,
    limit,
    remaining,
    resetAt: Math.ceil(expire / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((expire - now) / 1000)),
    ...(!allowed && { firstRefusal }),
  };
}
