/**
 * The web console at `/` (docs/console.md "Web console"; docs/contract.md#web-console): sign in, the
 * projects list, one project's live session, conversation, previews and deployments.
 *
 * It calls the tools themselves (the same tool adapter `tools/call` uses), so every rule, error,
 * limit and tenancy check is the tools' own (one exception: the projects list's state badges come
 * from one read of the workflow service, by owner, after `svc_list_projects`); each page, form or event stream a signed-in person
 * opens counts as one request against their rate limit, like a tool call. Pages are plain HTML
 * forms (POST for every change, each with the session's CSRF token, then 303 to a page); the one
 * static script adds live updates over Server-Sent Events. Host/Origin are checked by the HTTP
 * transport before a request reaches the console.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { notFound } from '../errors.js';
import { consoleContext, SESSION_COOKIE, type ConsoleContext, type WebConsoleDeps } from './console-context.js';
import { consoleGuards, fromOwnPages } from './console-guards.js';
import { isReading, type ConsoleRoute } from './console-route.js';
import { readCookies } from './http-util.js';
import { projectRoutes } from './project-routes.js';
import { signInRoutes } from './sign-in-routes.js';
import { serveStatic } from './static-assets.js';

/** The console as the HTTP transport's routing table sees it. */
export interface WebConsole {
  /** Its routes, which the transport mounts behind its host check and form origin. */
  routes: readonly ConsoleRoute[];
  /** Ends the open event streams (shutdown). */
  close(): void;
  /** The user of the request's valid console session and its CSRF token, or null (the OAuth consent page asks this). */
  sessionUser(req: IncomingMessage): Promise<{ userId: string; userName: string; csrf: string } | null>;
}

/**
 * Builds the console: its route groups (`sign-in-routes.ts`, `project-routes.ts`, the static
 * assets), each declaring its guards (`console-guards.ts`; docs/architecture.md "The HTTP pipeline").
 */
export function createWebConsole(deps: WebConsoleDeps): WebConsole {
  const ctx = consoleContext(deps);
  const guards = consoleGuards(ctx);
  const staticFile = (req: IncomingMessage, res: ServerResponse, path: string) => serveStaticFile(ctx, req, res, path);
  return {
    routes: [
      ...signInRoutes(ctx, guards),
      ...projectRoutes(ctx, guards),
      { path: '/console/*', guards: [], handler: staticFile },
      { path: '/favicon.ico', guards: [], handler: staticFile },
    ],
    close: () => ctx.hub.closeAll(),
    sessionUser: async (req) => {
      if (!fromOwnPages(req)) return null;
      const session = await deps.sessions.authenticate(readCookies(req).get(ctx.cookieName(SESSION_COOKIE)));
      return session ? { userId: session.caller.userId, userName: session.caller.userName, csrf: session.csrf } : null;
    },
  };
}

/** The console's script, style sheet and icon (`static-assets.ts`); the 404 page for any other path. */
async function serveStaticFile(
  ctx: ConsoleContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (isReading(req) && (await serveStatic(res, path, req.method === 'HEAD'))) return;
  return ctx.failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }));
}
