/**
 * Users and API tokens: issuing, listing, revoking and checking tokens (docs/contract.md#tokens-and-security,
 * docs/cli.md#command-line, docs/contract.md#tokens-and-security).
 */
import { randomUUID } from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import { unauthenticated } from '../errors.js';
import type { TokenRepo } from '../store/repos.js';
import type { UserRepo } from '../store/repos.js';
import type { UserRow } from '../store/rows.js';
import {
  displayPrefix,
  generateToken,
  hashToken,
  isExpired,
  MAX_TOKEN_LIFETIME_MS,
  TOKEN_PREFIX,
} from './api-token.js';
import type { Caller } from './caller.js';
import { ACCESS_TOKEN_PREFIX, type OAuthGrants } from './oauth-grants.js';
import { cachedToken, type TokenCache } from './token-cache.js';
import { publishCacheChange } from '../store/read-cache.js';
import type { Store } from '../store/store.js';

/** OAuth access tokens accepted besides API tokens (docs/security.md "Sign in with OAuth"). */
export interface OAuthAccessCheck {
  grants: OAuthGrants;
  /** The resource URL an access token must have been issued for: this server's `/mcp`, read at each check. */
  audience(): string;
}

/** How often a grant's "last used" time is written, at most (ms): not a write per request. */
const TOUCH_INTERVAL_MS = 60_000;

/** A token as a listing shows it: never the whole token. */
export interface TokenSummary {
  id: string;
  user: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  state: 'active' | 'expired' | 'revoked';
  /** Lists and calls only the read-only tools (`token create --read-only`). */
  readOnly: boolean;
}

/** Issues, lists, revokes and checks API tokens; manages users' plans (docs/contract.md#tokens-and-security, docs/cli.md#command-line, docs/contract.md#tokens-and-security). */
export class TokenService {
  /**
   * @param notices the store whose `cache` notice (`tokens`) tells every node's token cache that a
   *   token was revoked or a plan changed (docs/workflows.md "Change notices"); without it only this
   *   process's cache is cleared.
   */
  constructor(
    private readonly users: UserRepo,
    private readonly tokens: TokenRepo,
    private readonly clock: Clock,
    private readonly cache?: TokenCache,
    private readonly oauth?: OAuthAccessCheck,
    private readonly notices?: Pick<Store, 'transaction'>,
  ) {}

  private readonly touched = new Map<string, number>();

  /** Finds the user by name, creating it (on `plan`, default `free`) when new. */
  async ensureUser(name: string, plan = 'free'): Promise<UserRow> {
    const found = await this.users.findByName(name);
    if (found) return found;
    const row: UserRow = { id: randomUUID(), name, plan, createdAt: isoNow(this.clock) };
    await this.users.insert(row);
    return row;
  }

  /**
   * Issues a token for `userName` (creating the user if new). The returned `token` is the only
   * time the whole token exists outside the caller's hands.
   * @param expiresInMs lifetime in milliseconds (1 .. MAX_TOKEN_LIFETIME_MS); undefined for a token that does not expire.
   * @param readOnly a token that lists and calls only the read-only tools (annotated `readOnlyHint`).
   * @throws RangeError for a lifetime out of that range.
   */
  async create(
    userName: string,
    expiresInMs?: number,
    readOnly = false,
  ): Promise<{ token: string; summary: TokenSummary }> {
    if (
      expiresInMs !== undefined &&
      !(Number.isSafeInteger(expiresInMs) && expiresInMs > 0 && expiresInMs <= MAX_TOKEN_LIFETIME_MS)
    ) {
      throw new RangeError(`A token lifetime must be between 1 ms and ${MAX_TOKEN_LIFETIME_MS} ms (ten years)`);
    }
    const user = await this.ensureUser(userName);
    const token = generateToken();
    const now = this.clock();
    const row = {
      id: randomUUID(),
      userId: user.id,
      tokenHash: hashToken(token),
      displayPrefix: displayPrefix(token),
      createdAt: now.toISOString(),
      expiresAt: expiresInMs === undefined ? null : new Date(now.getTime() + expiresInMs).toISOString(),
      revokedAt: null,
      readOnly,
    };
    await this.tokens.insert(row);
    return { token, summary: this.summarise(row, user.name) };
  }

  async list(userName?: string): Promise<TokenSummary[]> {
    let userId: string | undefined;
    if (userName !== undefined) {
      const user = await this.users.findByName(userName);
      if (!user) return [];
      userId = user.id;
    }
    return (await this.tokens.list(userId)).map(({ token, user }) => this.summarise(token, user.name));
  }

  /**
   * Revokes token `id`; every node refuses it once the `cache` notice reached it (within a second).
   * Returns false when no such token exists. Revoking twice is harmless.
   */
  async revoke(id: string): Promise<boolean> {
    const row = await this.tokens.findById(id);
    if (!row) return false;
    if (!row.revokedAt) await this.tokens.revoke(id, isoNow(this.clock));
    await this.tokensChanged();
    return true;
  }

  /** Puts user `name` (created if new) on `plan`. The plan must exist in the operator's table. */
  async setPlan(name: string, plan: string): Promise<void> {
    const user = await this.ensureUser(name);
    await this.users.setPlan(user.id, plan);
    await this.tokensChanged();
  }

  /** Clears this process's token cache and tells every other node's (after the write committed). */
  private async tokensChanged(): Promise<void> {
    this.cache?.clear();
    if (this.notices) await publishCacheChange(this.notices, 'tokens');
  }

  /**
   * The token cache's generation: it moves whenever a token was revoked or a plan changed (here,
   * on another node, or by another process on the data dir, as of the last `authenticate`), so
   * that an answer kept for a caller (the gateway's reply memo) is dropped with it. 0 without a cache.
   */
  generation(): number {
    return this.cache?.dropped() ?? 0;
  }

  /** The caller of a token in the token cache and not expired; undefined otherwise (`authenticate` decides). */
  private cachedCaller(token: string): Caller | undefined {
    const cached = this.cache?.get(token);
    if (!cached) return undefined;
    // An API token without expiry needs no clock (one Date fewer per request).
    if (cached.expiresAtMs === null && !cached.caller.rateKey) return cached.caller;
    const now = this.clock();
    if (cached.expiresAtMs !== null && !(cached.expiresAtMs > now.getTime())) return undefined;
    if (cached.caller.rateKey) this.touch(cached.caller.tokenId, now);
    return cached.caller;
  }

  /**
   * Checks a presented token: an API token, or an OAuth access token (`svc_at_`) issued for this
   * server's `/mcp` (its audience, RFC 8707, is checked when the token is looked up; the in-memory cache holds only
   * tokens verified for this server, and clears when a token is revoked or a plan changes).
   * A token in the token cache is answered at once: the caller itself, no promise (a hit of the
   * reply memo is one synchronous step, docs/architecture.md "The reply memo"); any other is
   * looked up in the store: a promise.
   * @throws ServiceError `unauthenticated` (-32001), always as a rejected promise, when it is
   *   missing, malformed, unknown, expired, revoked, or an access token for another resource.
   */
  authenticate(token: string | undefined | null): Caller | Promise<Caller> {
    if (!token || !token.startsWith(TOKEN_PREFIX) || token.length > 200) return Promise.reject(unauthenticated());
    // Looked up by the token itself: a hit costs no SHA-256 (token-cache.ts).
    return this.cachedCaller(token) ?? this.lookUp(token);
  }

  /** `authenticate` of a token the cache does not hold: from the store (or the OAuth grants), then cached. */
  private async lookUp(token: string): Promise<Caller> {
    const now = this.clock();
    const hash = hashToken(token);
    if (this.oauth && token.startsWith(ACCESS_TOKEN_PREFIX)) {
      const access = await this.oauth.grants.verifyAccess(token, this.oauth.audience());
      // An API token may start with `svc_at_` too (1 in 2^18): fall through to the API tokens.
      if (access) {
        const caller: Caller = {
          userId: access.userId,
          userName: access.userName,
          plan: access.plan,
          tokenId: access.grantId,
          rateKey: `user:${access.userId}`,
        };
        this.cache?.set(token, cachedToken(caller, access.expiresAt));
        this.touch(access.grantId, now);
        return caller;
      }
    }
    const found = await this.tokens.findByHash(hash);
    if (!found) throw unauthenticated();
    const { token: row, user } = found;
    if (row.revokedAt) throw unauthenticated();
    if (isExpired(row.expiresAt, now)) throw unauthenticated();
    const caller: Caller = {
      userId: user.id,
      userName: user.name,
      plan: user.plan,
      tokenId: row.id,
      ...(row.readOnly && { readOnly: true as const }),
    };
    this.cache?.set(token, cachedToken(caller, row.expiresAt));
    return caller;
  }

  /**
   * What this store knows of a presented token, for operator messages (never for answers to a
   * client, which only ever see -32001): `malformed` (not an `svc_` token), `unknown` (not issued
   * in this store), `revoked`, `expired` or `active`.
   */
  async stateOf(token: string): Promise<'malformed' | 'unknown' | 'revoked' | 'expired' | 'active'> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return 'malformed';
    const found = await this.tokens.findByHash(hashToken(token));
    if (!found) return 'unknown';
    if (found.token.revokedAt) return 'revoked';
    if (found.token.expiresAt && found.token.expiresAt <= isoNow(this.clock)) return 'expired';
    return 'active';
  }

  private touch(grantId: string, now: Date): void {
    const last = this.touched.get(grantId);
    if (last !== undefined && now.getTime() - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(grantId, now.getTime());
    if (this.touched.size > 10_000) this.touched.clear();
    this.oauth?.grants.touch(grantId).catch(() => undefined);
  }

  private summarise(
    row: {
      id: string;
      displayPrefix: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
      readOnly: boolean;
    },
    user: string,
  ): TokenSummary {
    const state = row.revokedAt ? 'revoked' : isExpired(row.expiresAt, this.clock()) ? 'expired' : 'active';
    return {
      id: row.id,
      user,
      prefix: `${row.displayPrefix}…`,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      revokedAt: row.revokedAt,
      state,
      readOnly: row.readOnly,
    };
  }
}
