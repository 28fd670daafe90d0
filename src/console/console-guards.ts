/**
 * The console's guards (docs/architecture.md "The HTTP pipeline"), mounted after the transport's
 * host check and form origin: `session`, `form` and `rateLimit`. What they find (the session, the
 * form) is kept for the route's handler (`signedInOf`).
 */
import type { IncomingMessage } from 'node:http';
import { sameCsrf, type WebSession } from '../auth/web-sessions.js';
import { MESSAGES } from '../errors.js';
import type { ConsoleContext, Viewer } from './console-context.js';
import { SESSION_COOKIE } from './console-context.js';
import { guard, type Guard } from '../io/route-guard.js';
import { isReading } from './console-route.js';
import { cookie, readCookies, readForm, redirect } from './http-util.js';
import { errorPage } from './pages.js';
import { badForm, methodNotAllowed } from './plain-replies.js';

/** What the console's guards found about a signed-in request, for its handler. */
export interface SignedInRequest {
  /** The session cookie's value. */
  secret: string;
  session: WebSession;
  viewer: Viewer;
  /** The form of a POST, read and checked (`form` guard); absent for GET and HEAD. */
  form?: URLSearchParams;
}

/** The console's guards and what they found. */
export interface ConsoleGuards {
  /** A valid session cookie, sent from the console's own pages (`fromOwnPages`): else 303 to the sign-in page. */
  session: Guard;
  /** A change is a POST of a form of at most 256 KiB (`readForm`) carrying the session's CSRF token: else 405, 413, 415 or 403. */
  form: Guard;
  /** Every page, form and event stream counts as one request against the user's rate limit, like a tool call. */
  rateLimit: Guard;
  /**
   * What the guards found about `req`.
   * @throws Error when the route was mounted without the `session` guard (a programming error).
   */
  signedInOf(req: IncomingMessage): SignedInRequest;
}

/**
 * Whether a request may act with the browser's console session: `Sec-Fetch-Site` says where it
 * came from, and only the console's own pages (`same-origin`) or the person (`none`: typed,
 * bookmarked) may; another site or another host of this one (a preview's credentialed `no-cors`
 * request, a link) gets no session and spends no request budget. Browsers that send no fetch
 * metadata are taken as before (the SameSite=Strict cookie still applies).
 */
export function fromOwnPages(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

/** The guards of one console. */
export function consoleGuards(ctx: ConsoleContext): ConsoleGuards {
  const found = new WeakMap<IncomingMessage, SignedInRequest>();
  const signedInOf = (req: IncomingMessage): SignedInRequest => {
    const state = found.get(req);
    if (!state) throw new Error('console route mounted without its session guard');
    return state;
  };
  return {
    session: sessionGuard(ctx, found),
    form: formGuard(ctx, signedInOf),
    rateLimit: rateLimitGuard(ctx, signedInOf),
    signedInOf,
  };
}

/** The `session` guard: records what it found in `found`. */
function sessionGuard(ctx: ConsoleContext, found: WeakMap<IncomingMessage, SignedInRequest>): Guard {
  const { cookieName } = ctx;
  return guard('session', async (req, res) => {
    const cookies = readCookies(req);
    // A request another site or another host started never acts with the session (fromOwnPages).
    const secret = fromOwnPages(req) ? cookies.get(cookieName(SESSION_COOKIE)) : undefined;
    const session = await ctx.deps.sessions.authenticate(secret);
    if (!session || secret === undefined) {
      // A stale cookie is dropped; the browser goes to the sign-in page.
      const headers =
        secret !== undefined ? { 'Set-Cookie': cookie(cookieName(SESSION_COOKIE), '', 0, ctx.secure()) } : undefined;
      if (!isReading(req)) req.resume();
      redirect(res, '/signin', headers);
      return false;
    }
    found.set(req, {
      secret,
      session,
      viewer: { userName: session.caller.userName, csrf: session.csrf, mcpUrl: ctx.mcpUrl() },
    });
    return true;
  });
}

/** The `form` guard: keeps the form it read in the request's `SignedInRequest`. */
function formGuard(ctx: ConsoleContext, signedInOf: (req: IncomingMessage) => SignedInRequest): Guard {
  return guard('form', (req, res) => {
    if (isReading(req)) return true;
    if (req.method !== 'POST') {
      methodNotAllowed(res);
      return false;
    }
    return readForm(req).then((body) => {
      if (typeof body === 'string') {
        badForm(res, body);
        return false;
      }
      const state = signedInOf(req);
      if (!sameCsrf(state.session.csrf, body.get('csrf'))) {
        ctx.page(
          res,
          403,
          errorPage(
            {
              code: -32600,
              message: MESSAGES.invalidRequest,
              hint: 'The form is out of date or came from another site: reload the page and try again.',
            },
            state.viewer,
          ),
        );
        return false;
      }
      state.form = body;
      return true;
    });
  });
}

/** The `rateLimit` guard: sets the `X-RateLimit-*` headers, or answers the 429 page. */
function rateLimitGuard(ctx: ConsoleContext, signedInOf: (req: IncomingMessage) => SignedInRequest): Guard {
  return guard('rateLimit', async (req, res) => {
    const { session, viewer } = signedInOf(req);
    try {
      const { rate } = await ctx.deps.gate.admitCaller(session.caller);
      res.setHeader('X-RateLimit-Limit', String(rate.limit));
      res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
      res.setHeader('X-RateLimit-Reset', String(rate.resetAt));
      return true;
    } catch (error) {
      ctx.failurePage(res, error, viewer);
      return false;
    }
  });
}
