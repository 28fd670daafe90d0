/**
 * The state behind OAuth sign-in (docs/contract.md, "Sign in with OAuth"): grants, authorization
 * codes, access and refresh tokens. The protocol itself (parameter checks, PKCE verification,
 * error bodies) is the MCP SDK's; this class decides what a code or token allows:
 *
 * - a code is single use, bound to client, redirect URI, PKCE challenge, resource and grant (so
 *   user); presenting a used code again revokes the grant it made (OAuth 2.1, section 4.1.3);
 * - access tokens (`svc_at_`, 1 h) are good only at the resource they were issued for (RFC 8707);
 * - refresh tokens (`svc_rt_`, 30 days) rotate on every use; presenting a used one again revokes
 *   the whole grant, every access and refresh token of it (OAuth 2.1, section 4.3.1);
 * - everything is stored as SHA-256 only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { OAuthRepo, OAuthTokenWithGrant } from '../store/repos.js';
import type { OAuthTokenRow } from '../store/rows.js';
import { hashToken, isExpired } from './api-token.js';

/** Prefix of OAuth access tokens. */
export const ACCESS_TOKEN_PREFIX = 'svc_at_';
/** Prefix of OAuth refresh tokens. */
const REFRESH_TOKEN_PREFIX = 'svc_rt_';

/** Lifetimes, in seconds (`AppConfig.oauth`). */
export interface OAuthLifetimes {
  /** Authorization code (default 60). */
  codeTtlSeconds?: number;
  /** Access token (default 3600). */
  accessTokenTtlSeconds?: number;
  /** Refresh token (default 30 days). */
  refreshTokenTtlSeconds?: number;
}

/** A refusal, with the OAuth error code the token endpoint answers (RFC 6749 section 5.2, RFC 8707). */
export class OAuthGrantError extends Error {
  constructor(
    readonly code: 'invalid_grant' | 'invalid_target',
    message: string,
  ) {
    super(message);
    this.name = 'OAuthGrantError';
  }
}

/**
 * True for an OAuthGrantError. By name, not `instanceof`: the OAuth routes are bundled apart
 * from the rest of the server (scripts/bundle.mjs), so they see another copy of the class.
 */
export function isOAuthGrantError(error: unknown): error is OAuthGrantError {
  return error instanceof Error && error.name === 'OAuthGrantError';
}

/** A token response (RFC 6749 section 5.1). */
export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope?: string;
}

/** What an approval on the consent page binds its code to. */
export interface Approval {
  userId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  /** Space-separated scopes ('' for none). */
  scope: string;
}

/** A grant as `token list` shows it. */
export interface GrantSummary {
  id: string;
  user: string;
  client: string;
  clientId: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** When its newest refresh token expires: the grant lives until then unless refreshed. */
  expiresAt: string | null;
  revokedAt: string | null;
  /** `pending`: approved, its code not exchanged yet (an abandoned one is deleted a day later). */
  state: 'pending' | 'active' | 'expired' | 'revoked';
}

/** A verified access token: who it acts for and through which grant. */
export interface VerifiedAccess {
  userId: string;
  userName: string;
  plan: string;
  grantId: string;
  clientId: string;
  /** ISO expiry of the access token. */
  expiresAt: string;
}

/** Grants, codes and tokens of the OAuth authorization server. */
export class OAuthGrants {
  private readonly codeTtl: number;
  private readonly accessTtl: number;
  private readonly refreshTtl: number;

  constructor(
    private readonly repo: OAuthRepo,
    private readonly clock: Clock,
    lifetimes: OAuthLifetimes = {},
    /**
     * Called (and awaited) after any revocation has committed, so that caches of verified tokens
     * forget them: on every node, through the store's `cache` notice.
     */
    private readonly onRevoke: () => void | Promise<void> = () => undefined,
  ) {
    this.codeTtl = lifetimes.codeTtlSeconds ?? 60;
    this.accessTtl = lifetimes.accessTokenTtlSeconds ?? 3600;
    this.refreshTtl = lifetimes.refreshTokenTtlSeconds ?? 30 * 86_400;
  }

  /** Records an approval as a new grant and returns its authorization code. */
  async approve(approval: Approval): Promise<string> {
    const now = this.clock();
    // Housekeeping at each approval: a used code is kept a day, so that a late replay still
    // revokes what it made; expired tokens go.
    await this.repo.deleteExpired(new Date(now.getTime() - 86_400_000).toISOString(), now.toISOString());
    const grantId = randomUUID();
    const code = randomBytes(32).toString('base64url');
    await this.repo.insertGrant({
      id: grantId,
      userId: approval.userId,
      clientId: approval.clientId,
      clientName: approval.clientName,
      resource: approval.resource,
      scope: approval.scope,
      createdAt: now.toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    });
    await this.repo.insertCode({
      codeHash: hashToken(code),
      grantId,
      clientId: approval.clientId,
      redirectUri: approval.redirectUri,
      codeChallenge: approval.codeChallenge,
      resource: approval.resource,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.codeTtl * 1000).toISOString(),
      usedAt: null,
    });
    return code;
  }

  /**
   * The PKCE challenge of a code issued to `clientId`.
   * @throws OAuthGrantError `invalid_grant` for a code that is unknown, another client's, expired
   *   or already used (a used code also revokes its grant).
   */
  async challengeFor(clientId: string, code: string): Promise<string> {
    return (await this.usableCode(clientId, code)).codeChallenge;
  }

  /**
   * Exchanges a code (its PKCE verifier already checked) for tokens.
   * @throws OAuthGrantError `invalid_grant` as `challengeFor`, or for a redirect URI other than the
   *   authorization request's; `invalid_target` for a resource other than the code's.
   */
  async exchangeCode(
    clientId: string,
    code: string,
    redirectUri: string | undefined,
    resource: string | undefined,
  ): Promise<IssuedTokens> {
    const row = await this.usableCode(clientId, code);
    if (redirectUri !== undefined && redirectUri !== row.redirectUri)
      throw new OAuthGrantError('invalid_grant', 'redirect_uri does not match the authorization request');
    if (resource !== undefined && resource !== row.resource)
      throw new OAuthGrantError('invalid_target', 'resource does not match the authorization request');
    const now = this.clock().toISOString();
    if (!(await this.repo.useCode(row.codeHash, now))) {
      await this.revokeGrant(row.grantId);
      throw new OAuthGrantError('invalid_grant', 'Authorization code was already used');
    }
    const grant = await this.repo.findGrant(row.grantId);
    if (!grant || grant.revokedAt) throw new OAuthGrantError('invalid_grant', 'The grant was revoked');
    return await this.issue(grant.id, grant.resource, grant.scope);
  }

  /**
   * Exchanges a refresh token for a new access and refresh token (the old one is used up).
   * @throws OAuthGrantError `invalid_grant` for a token that is unknown, another client's, expired,
   *   revoked or already used (which revokes the whole grant); `invalid_target` for another resource.
   */
  async refresh(clientId: string, refreshToken: string, resource: string | undefined): Promise<IssuedTokens> {
    const found = refreshToken.startsWith(REFRESH_TOKEN_PREFIX)
      ? await this.repo.findToken(hashToken(refreshToken))
      : undefined;
    if (!found || found.token.kind !== 'refresh' || found.grant.clientId !== clientId)
      throw new OAuthGrantError('invalid_grant', 'Invalid refresh token');
    const { token, grant } = found;
    if (token.usedAt) {
      await this.revokeGrant(grant.id);
      throw new OAuthGrantError(
        'invalid_grant',
        'Refresh token was already used; every token of this grant is now revoked',
      );
    }
    if (token.revokedAt || grant.revokedAt || isExpired(token.expiresAt, this.clock()))
      throw new OAuthGrantError('invalid_grant', 'Invalid refresh token');
    if (resource !== undefined && resource !== grant.resource)
      throw new OAuthGrantError('invalid_target', 'resource does not match the grant');
    if (!(await this.repo.useToken(token.id, this.clock().toISOString()))) {
      await this.revokeGrant(grant.id);
      throw new OAuthGrantError(
        'invalid_grant',
        'Refresh token was already used; every token of this grant is now revoked',
      );
    }
    return await this.issue(grant.id, grant.resource, grant.scope);
  }

  /**
   * Checks an access token for `audience` (the resource URL it is presented at): its caller, or
   * null for a token that is unknown, expired, revoked, of a revoked grant, or for another resource.
   */
  async verifyAccess(accessToken: string, audience: string): Promise<VerifiedAccess | null> {
    if (!accessToken.startsWith(ACCESS_TOKEN_PREFIX) || accessToken.length > 200) return null;
    const found = await this.repo.findToken(hashToken(accessToken));
    if (!found) return null;
    return this.accessOf(found, audience);
  }

  /** Records that the grant was used now (for `token list`). */
  async touch(grantId: string): Promise<void> {
    await this.repo.touchGrant(grantId, this.clock().toISOString());
  }

  /**
   * Revokes a token presented to the revocation endpoint (RFC 7009) by `clientId`: an access
   * token alone, a refresh token with its whole grant. Unknown tokens and other clients' tokens
   * are ignored, as RFC 7009 section 2.2 asks.
   */
  async revokePresented(clientId: string, token: string): Promise<void> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) && !token.startsWith(REFRESH_TOKEN_PREFIX)) return;
    const found = await this.repo.findToken(hashToken(token));
    if (!found || found.grant.clientId !== clientId) return;
    if (found.token.kind === 'refresh') await this.revokeGrant(found.grant.id);
    else {
      await this.repo.revokeToken(found.token.id, this.clock().toISOString());
      await this.onRevoke();
    }
  }

  /** Revokes grant `id` and all its tokens; false when there is no such grant. Twice is harmless. */
  async revokeGrant(id: string): Promise<boolean> {
    if (!(await this.repo.findGrant(id))) return false;
    await this.repo.revokeGrant(id, this.clock().toISOString());
    await this.onRevoke();
    return true;
  }

  /** Grants of every user, or of `userId`, with their state. */
  async list(userId?: string): Promise<GrantSummary[]> {
    const now = this.clock();
    return Promise.all(
      (await this.repo.listGrants(userId)).map(async ({ grant, user }) => {
        const expiresAt = await this.repo.lastRefreshExpiry(grant.id);
        const state = grant.revokedAt
          ? 'revoked'
          : expiresAt === null
            ? (await this.repo.hasOpenCode(grant.id, now.toISOString()))
              ? 'pending'
              : 'expired'
            : isExpired(expiresAt, now)
              ? 'expired'
              : 'active';
        return {
          id: grant.id,
          user: user.name,
          client: grant.clientName,
          clientId: grant.clientId,
          createdAt: grant.createdAt,
          lastUsedAt: grant.lastUsedAt,
          expiresAt,
          revokedAt: grant.revokedAt,
          state,
        };
      }),
    );
  }

  private accessOf(found: OAuthTokenWithGrant, audience: string): VerifiedAccess | null {
    const { token, grant, user } = found;
    if (token.kind !== 'access' || token.revokedAt || grant.revokedAt) return null;
    if (isExpired(token.expiresAt, this.clock())) return null;
    if (token.resource !== audience) return null;
    return {
      userId: user.id,
      userName: user.name,
      plan: user.plan,
      grantId: grant.id,
      clientId: grant.clientId,
      expiresAt: token.expiresAt,
    };
  }

  private async usableCode(clientId: string, code: string) {
    const row = code.length <= 200 ? await this.repo.findCode(hashToken(code)) : undefined;
    if (!row || row.clientId !== clientId) throw new OAuthGrantError('invalid_grant', 'Invalid authorization code');
    if (row.usedAt) {
      // A replayed code: whoever holds it may be an attacker, so the tokens it made go too.
      await this.revokeGrant(row.grantId);
      throw new OAuthGrantError('invalid_grant', 'Authorization code was already used');
    }
    if (isExpired(row.expiresAt, this.clock()))
      throw new OAuthGrantError('invalid_grant', 'Authorization code has expired');
    return row;
  }

  private async issue(grantId: string, resource: string, scope: string): Promise<IssuedTokens> {
    const now = this.clock();
    const access = ACCESS_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const refresh = REFRESH_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const row = (kind: OAuthTokenRow['kind'], token: string, ttl: number): OAuthTokenRow => ({
      id: randomUUID(),
      tokenHash: hashToken(token),
      kind,
      grantId,
      resource,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
      usedAt: null,
      revokedAt: null,
    });
    await this.repo.insertToken(row('access', access, this.accessTtl));
    await this.repo.insertToken(row('refresh', refresh, this.refreshTtl));
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessTtl,
      refresh_token: refresh,
      ...(scope && { scope }),
    };
  }
}
