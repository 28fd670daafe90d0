/**
 * `POST /authorize/consent` (docs/security.md "Sign in with OAuth"): the person's decision on the consent
 * page. A missing or wrong CSRF token, or a request that is unknown, expired or already decided,
 * ends with a 400 page and nothing issued. Deny sends the browser back with
 * `error=access_denied`; approve with a good credential (an API token or a one-time login code,
 * or a console session proven by its own CSRF token from the page) sends it back with a single-use code bound to that user. A refused
 * credential shows the page again with 401 and issues nothing. Each typed credential counts
 * against the same per-address bound as the console's sign-in (429 past it), so credentials
 * cannot be guessed here faster than there.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { hashToken } from '../auth/api-token.js';
import { userOfCredential } from '../auth/sign-in-credential.js';
import { sameCsrf } from '../auth/web-sessions.js';
import type { LoginCodeService } from '../auth/login-codes.js';
import type { TokenService } from '../auth/token-service.js';
import type { OAuthAuthorizationRequestRow } from '../store/rows.js';
import { sendConsentPage, sendProblemPage } from './consent-page.js';
import { clientNameOf, newCsrf, type OAuthProviderDeps, type StoredOAuthProvider } from './oauth-provider.js';

/** What the decision handler works with besides the provider's parts. */
export interface ConsentDeps extends OAuthProviderDeps {
  provider: StoredOAuthProvider;
  loginCodes: Pick<LoginCodeService, 'redeem'>;
  tokens: Pick<TokenService, 'authenticate'>;
  /**
   * Counts one typed credential from `address` against the per-address bound on unauthenticated
   * requests, as the console's sign-in does (the request gate's `countSignInAttempt`).
   * @throws a -32005 ServiceError past the bound.
   */
  countSignInAttempt?(address: string): Promise<void>;
  /** The client address of a request (behind a trusted proxy, from `X-Forwarded-For`); default the socket's peer. */
  clientAddress?(req: IncomingMessage): string;
}

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

function sameSecret(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function redirectWith(res: Response, request: OAuthAuthorizationRequestRow, params: Record<string, string>): void {
  const url = new URL(request.redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  url.searchParams.set('state', request.state);
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, url.href);
}

/** The express handler of `POST /authorize/consent`. */
export function consentDecisionHandler(deps: ConsentDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const requestId = field(req.body, 'request');
    const csrf = field(req.body, 'csrf');
    const decision = field(req.body, 'decision');
    const now = deps.clock();
    const request = requestId.length <= 100 ? await deps.repo.findRequest(requestId) : undefined;
    if (!request || request.decidedAt || Date.parse(request.expiresAt) <= now.getTime()) {
      return sendProblemPage(res, 400, 'This sign-in request is unknown, has expired or was already answered.');
    }
    if (!csrf || !sameSecret(csrf, request.csrfHash))
      return sendProblemPage(res, 400, 'The form could not be verified (CSRF check failed).');
    if (decision !== 'approve' && decision !== 'deny') return sendProblemPage(res, 400, 'Choose Approve or Deny.');

    if (decision === 'deny') {
      if (!(await deps.repo.decideRequest(request.id, now.toISOString())))
        return sendProblemPage(res, 400, 'This sign-in request was already answered.');
      return redirectWith(res, request, { error: 'access_denied', error_description: 'The user denied access' });
    }

    const client = await deps.provider.clientsStore.getClient(request.clientId);
    if (!client) return sendProblemPage(res, 400, 'The client of this sign-in request is no longer known.');
    const session = (await deps.sessionUser?.(req)) ?? null;
    // A console session counts only with its own CSRF token from the page (a same-site page could
    // otherwise post a request id and CSRF token it fetched itself, with this browser's cookie).
    const sessionProven = session !== null && sameCsrf(session.csrf, field(req.body, 'session_csrf'));
    if (!sessionProven && deps.countSignInAttempt) {
      try {
        await deps.countSignInAttempt(deps.clientAddress?.(req) ?? req.socket.remoteAddress ?? 'unknown');
      } catch (error) {
        const retryAfter = (error as { data?: { retryAfterSeconds?: number } }).data?.retryAfterSeconds ?? 60;
        res.setHeader('Retry-After', String(retryAfter));
        return sendProblemPage(
          res,
          429,
          `Too many sign-in attempts from this address: wait ${retryAfter} s, then start the sign-in again from your MCP host.`,
        );
      }
    }
    // A typed credential: an API token or a one-time login code (consumed), never an OAuth token.
    const user = sessionProven
      ? session
      : await userOfCredential(field(req.body, 'credential'), deps.tokens, (code) => deps.loginCodes.redeem(code));
    if (!user) {
      deps.logger.warn(
        { clientId: request.clientId, address: deps.clientAddress?.(req) ?? req.socket.remoteAddress },
        'consent refused a credential',
      );
      const fresh = newCsrf();
      await deps.repo.setRequestCsrf(request.id, fresh.hash);
      return sendConsentPage(
        res,
        {
          clientName: clientNameOf(client),
          clientId: client.client_id,
          redirectUri: request.redirectUri,
          requestId: request.id,
          csrf: fresh.csrf,
          error:
            'That API token or login code was not accepted. Check it, or get a new login code with mobile-builder-mcp login-code --user NAME.',
          signedInAs: session && { userName: session.userName, csrf: session.csrf },
        },
        401,
      );
    }
    if (!(await deps.repo.decideRequest(request.id, now.toISOString())))
      return sendProblemPage(res, 400, 'This sign-in request was already answered.');
    const code = await deps.grants.approve({
      userId: user.userId,
      clientId: client.client_id,
      clientName: clientNameOf(client).slice(0, 200),
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      scope: request.scope,
    });
    deps.logger.info({ user: user.userName, clientId: client.client_id }, 'OAuth client approved');
    redirectWith(res, request, { code });
  };
}
