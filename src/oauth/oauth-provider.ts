/**
 * Our `OAuthServerProvider` for the MCP SDK's authorization server handlers (docs/security.md "Sign in
 * with OAuth"). The SDK checks the protocol (client, exact redirect URI, PKCE S256 verification,
 * parameter shapes, error bodies); this adapter adds what the SDK leaves to the server:
 *
 * - `state` is required, and `resource` (RFC 8707), when given, must be this server's `/mcp`;
 * - an authorization request waits on the consent page, stored server-side for 10 minutes;
 * - codes, grants and tokens live in the store (`auth/oauth-grants.ts`): single-use codes,
 *   rotating refresh tokens with reuse detection, revocation (RFC 7009).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Response } from 'express';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import {
  InvalidGrantError,
  InvalidRequestError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { hashToken } from '../auth/api-token.js';
import { isOAuthGrantError, type OAuthGrants } from '../auth/oauth-grants.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { OAuthRepo } from '../store/repos.js';
import { StoredClients } from './clients-store.js';
import { sendConsentPage } from './consent-page.js';

/** How long an authorization request waits for the person's decision, in seconds. */
const REQUEST_TTL_SECONDS = 600;

/** Who is signed in, from a console session cookie. */
interface SessionUser {
  userId: string;
  userName: string;
  /**
   * The console session's CSRF token. The consent page carries it, and an approval counts the
   * session only when the form sends it back: the request's own CSRF token is no proof, since
   * whoever opens `/authorize` gets one.
   */
  csrf: string;
}

/** What the provider works with. */
export interface OAuthProviderDeps {
  repo: OAuthRepo;
  grants: OAuthGrants;
  clock: Clock;
  logger: Logger;
  /** This server's issuer URL (no trailing slash), read at each use. */
  issuer(): string;
  /** The user of a valid console session on this request, if the console is there; null otherwise. */
  sessionUser?(req: IncomingMessage): Promise<SessionUser | null>;
}

/** The resource this server's access tokens are for: `<issuer>/mcp`. */
export function resourceOf(issuer: string): string {
  return `${issuer}/mcp`;
}

/** Same URL, compared as URLs (`HTTP://Host:80/mcp` equals `http://host/mcp`). */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/** A new CSRF token for a consent page and its stored hash. */
export function newCsrf(): { csrf: string; hash: string } {
  const csrf = randomBytes(32).toString('base64url');
  return { csrf, hash: hashToken(csrf) };
}

/** The display name of a client: its `client_name`, else its id. */
export function clientNameOf(client: OAuthClientInformationFull): string {
  const name = client.client_name?.trim();
  return name ? name : client.client_id;
}

function grantError(error: unknown): unknown {
  if (isOAuthGrantError(error))
    return error.code === 'invalid_target'
      ? new InvalidTargetError(error.message)
      : new InvalidGrantError(error.message);
  return error;
}

/** The provider handed to the SDK's handlers. */
export class StoredOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: StoredClients;

  constructor(private readonly deps: OAuthProviderDeps) {
    this.clientsStore = new StoredClients(deps.repo, deps.clock, deps.logger, () => deps.issuer());
  }

  /**
   * Stores the authorization request and answers with the consent page.
   * @throws InvalidRequestError without `state`; InvalidTargetError for a resource other than
   *   this server's `/mcp` (the SDK redirects either to the client with the error).
   */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    if (!params.state) throw new InvalidRequestError('state is required');
    const resource = resourceOf(this.deps.issuer());
    if (params.resource && !sameUrl(params.resource.href, resource))
      throw new InvalidTargetError(`resource must be ${resource}`);
    const now = this.deps.clock();
    await this.deps.repo.deleteExpiredRequests(now.toISOString());
    const { csrf, hash } = newCsrf();
    const id = randomUUID();
    await this.deps.repo.insertRequest({
      id,
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state,
      resource,
      scope: (params.scopes ?? []).filter(Boolean).join(' '),
      csrfHash: hash,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + REQUEST_TTL_SECONDS * 1000).toISOString(),
      decidedAt: null,
    });
    const session = (await this.deps.sessionUser?.(res.req)) ?? null;
    sendConsentPage(res, {
      clientName: clientNameOf(client),
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      requestId: id,
      csrf,
      error: null,
      signedInAs: session && { userName: session.userName, csrf: session.csrf },
    });
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    try {
      return await this.deps.grants.challengeFor(client.client_id, authorizationCode);
    } catch (error) {
      throw grantError(error);
    }
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    authorizationCode: string,
    _codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    try {
      return await this.deps.grants.exchangeCode(
        client.client_id,
        authorizationCode,
        redirectUri,
        this.normalisedResource(resource),
      );
    } catch (error) {
      throw grantError(error);
    }
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    _scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    try {
      return await this.deps.grants.refresh(client.client_id, refreshToken, this.normalisedResource(resource));
    } catch (error) {
      throw grantError(error);
    }
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const resource = resourceOf(this.deps.issuer());
    const access = await this.deps.grants.verifyAccess(token, resource);
    if (!access) throw new InvalidTokenError('Invalid access token');
    return {
      token,
      clientId: access.clientId,
      scopes: [],
      expiresAt: Math.floor(Date.parse(access.expiresAt) / 1000),
      resource: new URL(resource),
      extra: { userId: access.userId },
    };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    await this.deps.grants.revokePresented(client.client_id, request.token);
  }

  /** A resource equal (as a URL) to ours is passed as ours, so that the grant's check is exact. */
  private normalisedResource(resource: URL | undefined): string | undefined {
    if (!resource) return undefined;
    const ours = resourceOf(this.deps.issuer());
    return sameUrl(resource.href, ours) ? ours : resource.href;
  }
}
