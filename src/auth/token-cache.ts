/**
 * Verified tokens kept in memory, so that most requests skip the token lookup and its SHA-256.
 * Keyed by the presented token itself: a hit is one hash-table lookup, and only a miss hashes the
 * token to look it up in the store (which holds hashes only). Only tokens that verified are
 * cached (at most the `ReadCache`'s 10 000, oldest dropped first), so unknown tokens cannot grow
 * it; the cache lives in process memory only and is never logged or written. Expiry is checked on
 * every hit; a revocation or a plan change clears it on every node through the store's `cache`
 * notice (`tokens`), and another process's commits on SQLite clear it within the `ReadCache`
 * interval (see `store/read-cache.ts`): the longest a `token revoke` from the CLI can lag.
 */
import type { ReadCache } from '../store/read-cache.js';
import type { Caller } from './caller.js';

/** A verified token as cached: its caller and expiry. */
export interface CachedToken {
  caller: Caller;
  /**
   * Expiry in ms since the epoch (parsed once, when cached), or null for a token that does not
   * expire; NaN (an unreadable expiry) never counts as valid.
   */
  expiresAtMs: number | null;
}

/** The token cache: a `ReadCache` keyed by the presented token. */
export type TokenCache = ReadCache<CachedToken>;

/** The cache entry of a verified token; `expiresAt` is ISO 8601, or null for never. */
export function cachedToken(caller: Caller, expiresAt: string | null): CachedToken {
  return { caller, expiresAtMs: expiresAt === null ? null : Date.parse(expiresAt) };
}
