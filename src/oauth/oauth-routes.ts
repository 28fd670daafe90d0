/**
 * The OAuth 2.1 authorization server of the HTTP transport (docs/security.md "Sign in with OAuth",
 * MCP authorization spec 2025-11-25): the MCP SDK's express handlers for `/authorize`, `/token`,
 * `/register` (RFC 7591) and `/revoke` (RFC 7009) on our provider, the consent decision, and the
 * metadata documents (RFC 9728 protected resource metadata, RFC 8414 authorization server
 * metadata). The transport loads this module only when it serves `/mcp` over HTTP, so the stdio
 * server never loads express.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { unexpectedFailureStatus } from '../errors.js';
import { hashPresentedClientSecret } from './clients-store.js';
import { consentDecisionHandler, type ConsentDeps } from './consent-decision.js';
import { sendProblemPage } from './consent-page.js';
import { resourceOf, StoredOAuthProvider } from './oauth-provider.js';

/** What the OAuth routes need from the service. */
export type OAuthRouteDeps = Omit<ConsentDeps, 'provider'> & {
  /** Trusted proxies (`--trust-proxy`): the routes' bounds per client address count the client they forward. */
  trustProxy?: readonly string[] | undefined;
};

/** The OAuth part of the routing table. */
export interface OAuthRoutes {
  /** The paths these routes answer (every method of each). */
  paths: readonly string[];
  handle(req: IncomingMessage, res: ServerResponse): void;
}

const PATHS: readonly string[] = [
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server',
  '/authorize',
  '/authorize/consent',
  '/token',
  '/register',
  '/revoke',
];

/** Per client address, per window: generous for people and hosts, a bound for scripts. */
const LIMITS = {
  authorize: { windowMs: 15 * 60_000, max: 300 },
  token: { windowMs: 15 * 60_000, max: 300 },
  register: { windowMs: 60 * 60_000, max: 100 },
  revoke: { windowMs: 15 * 60_000, max: 300 },
};

/** The authorization server metadata (RFC 8414) of `issuer`. */
function authorizationServerMetadata(
  issuer: string,
): OAuthMetadata & { client_id_metadata_document_supported: boolean } {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    client_id_metadata_document_supported: true,
  };
}

/** The protected resource metadata (RFC 9728) of this server's `/mcp`. */
function protectedResourceMetadata(issuer: string): OAuthProtectedResourceMetadata {
  return {
    resource: resourceOf(issuer),
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    resource_name: 'mobile-builder-mcp',
  };
}

function buildApp(deps: OAuthRouteDeps, issuer: string): Express {
  const provider = new StoredOAuthProvider(deps);
  const app = express();
  app.disable('x-powered-by');
  // The client address is the socket's, or behind a trusted proxy the client it forwards (express
  // reads `X-Forwarded-For` with proxy-addr); express-rate-limit's own checks of proxy headers are off.
  if (deps.trustProxy?.length) app.set('trust proxy', [...deps.trustProxy]);
  const limit = (name: keyof typeof LIMITS) => ({ rateLimit: { ...LIMITS[name], validate: false } });
  const prm = metadataHandler(protectedResourceMetadata(issuer));
  app.use('/.well-known/oauth-protected-resource/mcp', prm);
  app.use('/.well-known/oauth-protected-resource', prm);
  app.use('/.well-known/oauth-authorization-server', metadataHandler(authorizationServerMetadata(issuer)));
  // Before `/authorize`, whose handler would otherwise see this path too.
  app.post(
    '/authorize/consent',
    express.urlencoded({ extended: false, limit: '16kb' }),
    consentDecisionHandler({ ...deps, provider }),
  );
  app.use('/authorize', authorizationHandler({ provider, ...limit('authorize') }));
  // The form is parsed here so that the presented client secret can be hashed first (the SDK's
  // handlers skip a body that is already parsed).
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  app.use('/token', form, hashPresentedClientSecret, tokenHandler({ provider, ...limit('token') }));
  app.use(
    '/register',
    clientRegistrationHandler({
      clientsStore: provider.clientsStore,
      clientSecretExpirySeconds: 0,
      ...limit('register'),
    }),
  );
  app.use('/revoke', form, hashPresentedClientSecret, revocationHandler({ provider, ...limit('revoke') }));
  // A method the routes above do not take (`GET /authorize/consent`): our page, not express's.
  app.use((req: express.Request, res: express.Response) =>
    sendProblemPage(res, 405, `${req.method} is not supported here: start the sign-in again from your MCP host.`),
  );
  // Express's own error page would show a stack trace.
  app.use((error: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
    void next;
    if (res.headersSent) return void res.destroy();
    // A body the parser refused (too large, malformed) carries its 4xx status.
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return sendProblemPage(res, status, 'The request could not be read.');
    deps.logger.error({ err: error, path: req.path }, 'OAuth request failed');
    const failure = unexpectedFailureStatus(error);
    if (failure.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(failure.retryAfterSeconds));
    sendProblemPage(
      res,
      failure.status,
      failure.status === 503
        ? 'The server cannot reach its database right now. Try again in a moment.'
        : 'Something went wrong on the server. Try again.',
    );
  });
  return app;
}

/** Creates the OAuth routes; the express app is built for the issuer current at each request. */
export function createOAuthRoutes(deps: OAuthRouteDeps): OAuthRoutes {
  let built: { issuer: string; app: Express } | undefined;
  return {
    paths: PATHS,
    handle(req, res) {
      const issuer = deps.issuer();
      if (!built || built.issuer !== issuer) built = { issuer, app: buildApp(deps, issuer) };
      built.app(req as express.Request, res as express.Response);
    },
  };
}
