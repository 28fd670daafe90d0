/**
 * Verified tokens kept in memory, so that most requests skip the token lookup. Keyed by the
 * token's SHA-256; expiry is checked on every hit; any change to tokens or users made by this
 * process clears it, and another process's commits clear it within the `ReadCache` interval
 * (see `store/read-cache.ts`): the longest a `token revoke` from the CLI can lag.
 */
import type { ReadCache } from '../store/read-cache.js';
import type { Caller } from './caller.js';

/** A verified token as cached: its caller and expiry. */
export interface CachedToken {
  caller: Caller;
  /** ISO timestamp, or null for a token that does not expire. */
  expiresAt: string | null;
}

/** The token cache: a `ReadCache` keyed by SHA-256 hex of the token. */
export type TokenCache = ReadCache<CachedToken>;
