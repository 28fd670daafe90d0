/**
 * What a person types to sign in on a web page (the web console's sign-in, the OAuth consent
 * page): one of their API tokens (`svc_...`) or a one-time login code (docs/console.md "Web console",
 * "Sign in with OAuth"). An OAuth access or refresh token is never such a credential: it is good
 * at `/mcp` only (its audience, RFC 8707).
 */
import { TOKEN_PREFIX } from './api-token.js';
import type { TokenService } from './token-service.js';

/** What a one-time login code redeems to (the login code service's `redeem`, which consumes it). */
export type RedeemLoginCode = (code: string) => Promise<{ userId: string; userName: string } | null>;

/** The user a credential proves, and the API token it was (null for a login code). */
export interface CredentialUser {
  userId: string;
  userName: string;
  tokenId: string | null;
}

/**
 * The user `credential` proves, or null when it proves none (unknown, expired or revoked token,
 * an OAuth token, a used or expired login code, blank, or over 200 characters). A login code is
 * consumed. Never rejects.
 */
export async function userOfCredential(
  credential: string,
  tokens: Pick<TokenService, 'authenticate'>,
  redeemLoginCode?: RedeemLoginCode,
): Promise<CredentialUser | null> {
  const text = credential.trim();
  if (text.length === 0 || text.length > 200) return null;
  if (text.startsWith(TOKEN_PREFIX)) {
    try {
      const caller = await tokens.authenticate(text);
      // An OAuth access token is a caller with its user's rate key. By the caller, not the prefix:
      // an API token may start with `svc_at_` or `svc_rt_` too. Not a login code either: those never hold `_`.
      if (caller.rateKey !== undefined) return null;
      return { userId: caller.userId, userName: caller.userName, tokenId: caller.tokenId };
    } catch {
      return null;
    }
  }
  const redeemed = await redeemLoginCode?.(text);
  return redeemed ? { ...redeemed, tokenId: null } : null;
}
