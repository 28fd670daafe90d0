/**
 * Composition step of `createApp` (app.ts; docs/architecture.md): authentication and limits, the
 * API tokens, OAuth grants, login codes, console sessions, the request rate limiter and the request
 * gate that admits every message.
 */
import { LoginCodeService } from './auth/login-codes.js';
import { OAuthGrants } from './auth/oauth-grants.js';
import { RequestGate } from './auth/request-gate.js';
import type { CachedToken } from './auth/token-cache.js';
import { TokenService } from './auth/token-service.js';
import { WebSessionService } from './auth/web-sessions.js';
import type { Clock } from './clock.js';
import type { AppConfig } from './app-config.js';
import type { PlanTable } from './limits/plans.js';
import { MemoryRequestRateLimiter, type RequestRateLimiter } from './limits/request-rate-limiter.js';
import { StoreRequestRateLimiter } from './limits/store-rate-limiter.js';
import type { Logger } from './logger.js';
import type { PublicUrl } from './services/public-url.js';
import { ChangeWatch, publishCacheChange, ReadCache } from './store/read-cache.js';
import type { Store } from './store/store.js';

/** What the auth step works with: the open store and the app's shared parts. */
export interface AuthStepDeps {
  store: Store;
  config: Pick<AppConfig, 'oauth' | 'rateLimiter' | 'unauthenticatedPerMinute'>;
  /** The audience of OAuth access tokens follows its base URL (`<public URL>/mcp`). */
  publicUrl: Pick<PublicUrl, 'get'>;
  plans: PlanTable;
  clock: Clock;
  logger: Logger;
}

/** The auth step's parts; `limiterPool` is the PostgreSQL limiter's own pool, ended after the store (or null). */
export interface AuthParts {
  tokens: TokenService;
  oauthGrants: OAuthGrants;
  loginCodes: LoginCodeService;
  gate: RequestGate;
  webSessions: WebSessionService;
  limiterPool: { end(): Promise<void> } | null;
}

/**
 * Builds the auth and limits parts on `deps.store`. With PostgreSQL (and no `config.rateLimiter`)
 * loads the PostgreSQL rate limiter and opens its pool; nothing else is opened.
 */
export async function composeAuth(deps: AuthStepDeps): Promise<AuthParts> {
  const { store, config, clock } = deps;
  const { users, oauth: oauthRepo } = store.repos;
  // Cleared by the store's `cache:tokens` notices (a revocation or a plan change on any node) and
  // resets; exact: on SQLite another process's commit (the `token revoke` command) shows at once.
  const tokenCache = new ReadCache<CachedToken>(new ChangeWatch(store.events, (id) => id === 'tokens', true));
  const oauthGrants = new OAuthGrants(oauthRepo, clock, config.oauth, async () => {
    tokenCache.clear();
    await publishCacheChange(store, 'tokens');
  });
  // OAuth access tokens are good only at this server's `/mcp` (RFC 8707): the audience follows the public URL.
  const tokens = new TokenService(
    users,
    store.repos.tokens,
    clock,
    tokenCache,
    { grants: oauthGrants, audience: () => `${deps.publicUrl.get()}/mcp` },
    store,
  );
  const loginCodes = new LoginCodeService(users, store.repos.loginCodes, clock);
  const { rateLimiter, limiterPool } = await openRateLimiter(store, config.rateLimiter);
  const gate = new RequestGate(tokens, rateLimiter, deps.plans, {
    logger: deps.logger,
    ...(config.unauthenticatedPerMinute !== undefined && { unauthenticatedPerMinute: config.unauthenticatedPerMinute }),
  });
  const webSessions = new WebSessionService(store.repos.webSessions, tokens, clock, (code) => loginCodes.redeem(code));
  return { tokens, oauthGrants, loginCodes, gate, webSessions, limiterPool };
}

/**
 * The request rate limiter: `given` when set; else, with PostgreSQL, at most the limit across nodes, counted on
 * a small pool of its own (loaded only then: node-postgres stays out of a SQLite start, README
 * "Start-up time"); else in the store (a file store may be served by several processes, which
 * share the limits), or in memory for a store without rate windows (`:memory:`).
 */
async function openRateLimiter(
  store: Store,
  given: RequestRateLimiter | undefined,
): Promise<{ rateLimiter: RequestRateLimiter; limiterPool: AuthParts['limiterPool'] }> {
  const pgLimits = given || !store.databaseUrl ? null : await import('./limits/pg-rate-limiter.js');
  const limiterPool = pgLimits && store.databaseUrl ? pgLimits.createRateLimiterPool(store.databaseUrl) : null;
  const rateLimiter =
    given ??
    (pgLimits && limiterPool
      ? new pgLimits.PgRequestRateLimiter(limiterPool)
      : store.rateWindows
        ? new StoreRequestRateLimiter(store.rateWindows)
        : new MemoryRequestRateLimiter());
  return { rateLimiter, limiterPool };
}
