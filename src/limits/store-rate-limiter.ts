/**
 * The request limiter shared by every process that serves one data dir (README "Limits and
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
import type Database from 'better-sqlite3';
import { MemoryRequestRateLimiter, type RateDecision, type RequestRateLimiter } from './request-rate-limiter.js';

/** Counts claimed from the store at a time: 1/16 of the limit, within [1, MAX_LEASE]. */
const MAX_LEASE = 256;
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
  /** True once the store had nothing left to claim in this window. */
  exhausted: boolean;
}

/** A request limiter whose counters live in the SQLite store, shared across processes. */
export class StoreRequestRateLimiter implements RequestRateLimiter {
  private readonly claim: Database.Statement<[{ key: string; size: number; expire: number; now: number; limit: number }], { points: number; expire: number }>;
  private readonly deleteExpired: Database.Statement<[number]>;
  private readonly leases = new Map<string, Lease>();
  private readonly insurance = new MemoryRequestRateLimiter();
  private claims = 0;

  /** @param sqlite the store's open, migrated better-sqlite3 connection. */
  constructor(private readonly sqlite: Database.Database) {
    // Adds the lease to the window's count (a window that has ended starts again), never beyond
    // limit + lease; the caller gets min(lease, limit - count before), computed from the result.
    this.claim = sqlite.prepare(
      `INSERT INTO rate_limits (key, points, expire) VALUES (@key, @size, @expire)
       ON CONFLICT(key) DO UPDATE SET
         points = CASE WHEN expire > @now THEN min(points + @size, @limit + @size) ELSE @size END,
         expire = CASE WHEN expire > @now THEN expire ELSE excluded.expire END
       RETURNING points, expire`,
    );
    this.deleteExpired = sqlite.prepare('DELETE FROM rate_limits WHERE expire < ?');
  }

  async consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const now = Date.now();
    const id = `${limit}/${windowSeconds}:${key}`;
    let lease = this.leases.get(id);
    if (lease && lease.expire <= now) {
      this.leases.delete(id);
      lease = undefined;
    }
    if (lease && lease.left === 0 && !lease.exhausted) lease = this.renew(id, lease, limit, windowSeconds, now);
    if (!lease) {
      lease = this.renew(id, undefined, limit, windowSeconds, now);
      if (!lease) return this.insurance.consume(key, limit, windowSeconds);
    }
    if (lease.left === 0) {
      const first = !lease.exhausted;
      lease.exhausted = true;
      return decision(false, limit, 0, lease.expire, now, first);
    }
    lease.left--;
    return decision(true, limit, Math.max(0, limit - (lease.claimed - lease.left)), lease.expire, now, false);
  }

  /** Claims the next lease of `id`'s window; undefined when the store cannot answer. */
  private renew(id: string, current: Lease | undefined, limit: number, windowSeconds: number, now: number): Lease | undefined {
    const size = Math.min(MAX_LEASE, Math.max(1, Math.floor(limit / 16)));
    if (++this.claims % SWEEP_EVERY === 0) this.sweep(now);
    let row: { points: number; expire: number } | undefined;
    try {
      row = this.claim.get({ key: id, size, expire: now + windowSeconds * 1000, now, limit });
    } catch {
      if (current) this.leases.delete(id);
      return undefined;
    }
    if (!row) return undefined;
    const before = row.points - size;
    const granted = Math.max(0, Math.min(size, limit - before));
    const lease: Lease = {
      expire: row.expire,
      left: (current && current.expire === row.expire ? current.left : 0) + granted,
      claimed: Math.min(row.points, limit),
      exhausted: false,
    };
    if (this.leases.size >= 10_000 && !this.leases.has(id)) this.leases.clear();
    this.leases.set(id, lease);
    return lease;
  }

  /** Deletes windows that ended over an hour ago; a failure (store busy or closed) waits for the next sweep. */
  private sweep(now: number): void {
    try {
      if (this.sqlite.open) this.deleteExpired.run(now - 3_600_000);
    } catch {
      // Best effort: an ended window is started again by the next claim anyway.
    }
  }
}

function decision(allowed: boolean, limit: number, remaining: number, expire: number, now: number, firstRefusal: boolean): RateDecision {
  return {
    allowed,
    limit,
    remaining,
    resetAt: Math.ceil(expire / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((expire - now) / 1000)),
    ...(!allowed && { firstRefusal }),
  };
}
