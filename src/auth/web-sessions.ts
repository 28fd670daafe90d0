/**
 * Web console sessions (docs/console.md "Web console"): a person signs in once with one of their API
 * tokens or a one-time login code, and the browser holds a random session secret in the
 * `svc_session` cookie (HttpOnly, SameSite=Strict). Only its SHA-256 is stored. A session lasts
 * 12 hours, ends at sign-out, with the API token it was signed in with (revoked or expired), and
 * by `token revoke ID` (`end`).
 *
 * A console caller is counted against the request rate like a tool call: under the API token's
 * key when signed in with a token (so the console and that token's tool calls share one budget),
 * else under the user's key `user:<userId>` (the key OAuth grants use).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { WebSessionRepo } from '../store/repos.js';
import { isExpired } from './api-token.js';
import type { Caller } from './caller.js';
import { userOfCredential, type RedeemLoginCode } from './sign-in-credential.js';
import type { TokenService } from './token-service.js';

/** Lifetime of a console session: 12 hours, in ms. */
export const WEB_SESSION_TTL_MS = 12 * 3_600_000;

/** A signed-in browser: the caller, and the secrets the console derives from its cookie. */
export interface WebSession {
  caller: Caller;
  /** The CSRF token of this session's forms (derived from the cookie's secret, never stored). */
  csrf: string;
  expiresAt: string;
}

/** A console session as `token list` shows it. */
export interface WebSessionSummary {
  id: string;
  user: string;
  /** The display prefix of the API token it was signed in with, or `login code`. */
  signedInWith: string;
  createdAt: string;
  expiresAt: string;
}

/** Creates, checks and ends console sessions. */
export class WebSessionService {
  /** @param redeemLoginCode the login code service's `redeem`, when login codes are accepted. */
  constructor(
    private readonly sessions: WebSessionRepo,
    private readonly tokens: Pick<TokenService, 'authenticate'>,
    private readonly clock: Clock,
    private readonly redeemLoginCode?: RedeemLoginCode,
  ) {}

  /**
   * Signs in with an API token (`svc_...`) or a one-time login code (consumed).
   * @returns the new session's cookie secret and session, or null when the credential is refused.
   */
  async signIn(credential: string): Promise<{ secret: string; session: WebSession } | null> {
    const user = await userOfCredential(credential, this.tokens, this.redeemLoginCode);
    return user ? this.open(user.userId, user.tokenId) : null;
  }

  private async open(userId: string, tokenId: string | null): Promise<{ secret: string; session: WebSession } | null> {
    const now = this.clock();
    await this.sessions.deleteExpired(now.toISOString());
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + WEB_SESSION_TTL_MS).toISOString();
    await this.sessions.insert({
      id: randomUUID(),
      sessionHash: hashSecret(secret),
      userId,
      tokenId,
      createdAt: now.toISOString(),
      expiresAt,
    });
    const session = await this.authenticate(secret);
    return session ? { secret, session } : null;
  }

  /** The session of a cookie secret, or null when it is unknown, expired, or its token is revoked or expired. */
  async authenticate(secret: string | undefined): Promise<WebSession | null> {
    if (!secret || secret.length > 100) return null;
    const found = await this.sessions.findByHash(hashSecret(secret));
    if (!found) return null;
    const now = this.clock();
    const { session, user, token } = found;
    if (isExpired(session.expiresAt, now)) return null;
    if (token && (token.revokedAt !== null || isExpired(token.expiresAt, now))) return null;
    return {
      caller: {
        userId: user.id,
        userName: user.name,
        plan: user.plan,
        tokenId: session.tokenId ?? session.id,
        ...(session.tokenId === null && { rateKey: `user:${user.id}` }),
      },
      csrf: csrfOf(secret),
      expiresAt: session.expiresAt,
    };
  }

  /** Ends the session of a cookie secret (sign-out); unknown secrets are ignored. */
  async signOut(secret: string | undefined): Promise<void> {
    if (secret) await this.sessions.deleteByHash(hashSecret(secret));
  }

  /**
   * Live console sessions (not expired), of every user or of `userId`, for `token list`: never a
   * secret, only who, how they signed in (an API token's display prefix, or `login code`), and when.
   */
  async list(userId?: string): Promise<WebSessionSummary[]> {
    return (await this.sessions.listLive(this.clock().toISOString(), userId)).map(
      ({ session, userName, tokenPrefix }) => ({
        id: session.id,
        user: userName,
        signedInWith: tokenPrefix ?? 'login code',
        createdAt: session.createdAt,
        expiresAt: session.expiresAt,
      }),
    );
  }

  /** Ends the session with this id (`token revoke ID`); its browser is signed out at its next request. False when there is none. */
  async end(id: string): Promise<boolean> {
    return this.sessions.deleteById(id);
  }
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(`web-session:${secret}`, 'utf8').digest('hex');
}

/** The CSRF token of a session: a hash of its secret, so it needs no storage and leaks nothing of it. */
function csrfOf(secret: string): string {
  return createHash('sha256').update(`csrf:${secret}`, 'utf8').digest('base64url');
}

/** Constant-time comparison of two CSRF tokens. */
export function sameCsrf(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
