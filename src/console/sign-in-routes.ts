/**
 * The console's sign-in, sign-out and root routes (docs/contract.md "Web console"; docs/contract.md#web-console):
 * a login code or an API token opens a session cookie; signing out is never refused, not even past
 * the request limit.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sameCsrf, WEB_SESSION_TTL_MS } from '../auth/web-sessions.js';
import { MESSAGES } from '../errors.js';
import { SESSION_COOKIE, SIGNIN_COOKIE, type ConsoleContext } from './console-context.js';
import type { ConsoleGuards, SignedInRequest } from './console-guards.js';
import type { ConsoleRoute } from './console-route.js';
import { cookie, cookieSentTwice, readCookies, readForm, redirect } from './http-util.js';
import { signInPage } from './pages.js';
import { badForm, methodNotAllowed } from './plain-replies.js';
import { shown } from './shown-error.js';

/** `/` (to the projects), `/signin` (no guard: the page itself checks its double-submit cookie) and `/signout`. */
export function signInRoutes(ctx: ConsoleContext, guards: ConsoleGuards): ConsoleRoute[] {
  return [
    { path: '/', guards: [guards.session], handler: (_req, res) => redirect(res, '/projects') },
    { path: '/signin', guards: [], handler: (req, res) => signIn(ctx, req, res) },
    {
      path: '/signout',
      guards: [guards.session, guards.form],
      handler: (req, res) => signOut(ctx, res, guards.signedInOf(req)),
    },
  ];
}

/** `GET /signin` shows the form (or goes to the projects with a valid session); `POST /signin` opens a session. */
async function signIn(ctx: ConsoleContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { cookieName, deps, page } = ctx;
  const cookies = readCookies(req);
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (await deps.sessions.authenticate(cookies.get(cookieName(SESSION_COOKIE)))) return redirect(res, '/projects');
    const csrf = cookies.get(cookieName(SIGNIN_COOKIE)) || randomBytes(24).toString('base64url');
    const planted = cookieSentTwice(req, cookieName(SESSION_COOKIE)) || cookieSentTwice(req, cookieName(SIGNIN_COOKIE));
    const warning = planted
      ? {
          code: -32600,
          message: MESSAGES.invalidRequest,
          hint: 'This browser sends two console cookies of the same name: a page on another port of this host has set one. Clear the cookies of this site, then sign in.',
        }
      : undefined;
    return page(res, planted ? 400 : 200, signInPage(csrf, warning, ctx.mcpUrl()), {
      'Set-Cookie': cookie(cookieName(SIGNIN_COOKIE), csrf, 3600, ctx.secure()),
    });
  }
  if (req.method !== 'POST') return methodNotAllowed(res);
  const form = await readForm(req);
  if (typeof form === 'string') return badForm(res, form);
  const csrf = cookies.get(cookieName(SIGNIN_COOKIE));
  if (!csrf || !sameCsrf(csrf, form.get('csrf'))) {
    const fresh = randomBytes(24).toString('base64url');
    return page(
      res,
      400,
      signInPage(
        fresh,
        { code: -32600, message: MESSAGES.invalidRequest, hint: 'The sign-in form expired: try again.' },
        ctx.mcpUrl(),
      ),
      {
        'Set-Cookie': cookie(cookieName(SIGNIN_COOKIE), fresh, 3600, ctx.secure()),
      },
    );
  }
  return signInWith(ctx, req, res, { csrf, credential: form.get('credential') ?? '' });
}

/** A checked sign-in form: counts the attempt against the client address (429), then tries the credential (401). */
async function signInWith(
  ctx: ConsoleContext,
  req: IncomingMessage,
  res: ServerResponse,
  form: { csrf: string; credential: string },
): Promise<void> {
  const { cookieName, deps, page } = ctx;
  try {
    await deps.gate.countSignInAttempt(deps.clientAddress?.(req) ?? req.socket.remoteAddress ?? 'unknown');
  } catch (error) {
    const s = shown(error);
    return page(res, 429, signInPage(form.csrf, s.error, ctx.mcpUrl()), { 'Retry-After': String(s.retryAfter ?? 60) });
  }
  const opened = await deps.sessions.signIn(form.credential);
  if (!opened) {
    deps.logger.warn({ address: deps.clientAddress?.(req) ?? req.socket.remoteAddress }, 'console sign-in refused');
    return page(res, 401, signInPage(form.csrf, { code: -32001, message: MESSAGES.unauthenticated }, ctx.mcpUrl()));
  }
  deps.logger.info({ user: opened.session.caller.userName }, 'console sign-in');
  return redirect(res, '/projects', {
    'Set-Cookie': [
      cookie(cookieName(SESSION_COOKIE), opened.secret, Math.floor(WEB_SESSION_TTL_MS / 1000), ctx.secure()),
      cookie(cookieName(SIGNIN_COOKIE), '', 0, ctx.secure()),
    ],
  });
}

/** `POST /signout`: ends the session and drops its cookie. Signing out is never refused, not even past the request limit. */
async function signOut(ctx: ConsoleContext, res: ServerResponse, state: SignedInRequest): Promise<void> {
  if (!state.form) return methodNotAllowed(res);
  await ctx.deps.sessions.signOut(state.secret);
  ctx.deps.logger.info({ user: state.session.caller.userName }, 'console sign-out');
  return redirect(res, '/signin', { 'Set-Cookie': cookie(ctx.cookieName(SESSION_COOKIE), '', 0, ctx.secure()) });
}
