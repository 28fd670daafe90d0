/**
 * The console's project routes, `/projects` and `/projects/...` (docs/contract.md "Web console";
 * docs/contract.md#web-console), behind the session, form and rate limit guards: the list, one
 * project's page and forms, its live event stream and its thumbnail.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { notFound } from '../errors.js';
import type { ConsoleContext } from './console-context.js';
import type { ConsoleGuards, SignedInRequest } from './console-guards.js';
import type { ConsoleRoute } from './console-route.js';
import { methodNotAllowed } from './plain-replies.js';
import { environmentAction, projectAction, renderProject } from './project-page.js';
import { projectStream } from './project-stream.js';
import { projectsList } from './projects-list-routes.js';

const PROJECT_PATH = /^\/projects\/([^/]+)(?:\/(messages|answer|cancel|env|events|thumbnail\.png))?$/;

/** `/projects` and `/projects/*`, each behind the `session`, `form` and `rateLimit` guards. */
export function projectRoutes(ctx: ConsoleContext, guards: ConsoleGuards): ConsoleRoute[] {
  const handler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) =>
    projectPages(ctx, { req, res, path, query, state: guards.signedInOf(req) });
  const projectGuards = [guards.session, guards.form, guards.rateLimit];
  return [
    { path: '/projects', guards: projectGuards, handler },
    { path: '/projects/*', guards: projectGuards, handler },
  ];
}

/** A request to a project route, with what the guards found. */
interface ProjectRequest {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: URLSearchParams;
  state: SignedInRequest;
}

/** Dispatches `/projects` and `/projects/<id>[/<action>]` by path and method (405 for a method a page does not take). */
async function projectPages(ctx: ConsoleContext, request: ProjectRequest): Promise<void> {
  const { req, res, path, query, state } = request;
  const { session, viewer, form } = state;
  if (path === '/projects') return projectsList(ctx, res, state);
  const match = PROJECT_PATH.exec(path);
  if (!match) return ctx.failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }), viewer);
  let projectId: string;
  try {
    projectId = decodeURIComponent(match[1]!);
  } catch {
    return ctx.failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }), viewer);
  }
  const action = match[2] as 'messages' | 'answer' | 'cancel' | 'env' | 'events' | 'thumbnail.png' | undefined;
  if (action === 'events') {
    if ((req.method ?? 'GET') !== 'GET') return methodNotAllowed(res);
    // The first read checks access with the tools' rule before the stream opens.
    try {
      await ctx.tools.getProject({ projectId }, session.caller);
    } catch (error) {
      return ctx.failurePage(res, error, viewer);
    }
    return events(ctx, request, projectId);
  }
  if (action === 'thumbnail.png') {
    if (form) return methodNotAllowed(res);
    return thumbnail(ctx, request, projectId);
  }
  if (action === undefined) {
    if (form) return methodNotAllowed(res);
    return renderProject(ctx, { req, res, session, projectId, query });
  }
  if (!form) return methodNotAllowed(res);
  if (action === 'env') return environmentAction(ctx, { req, res, session, projectId, form });
  return projectAction(ctx, { req, res, session, projectId, action, form });
}

/** The project's live event stream (Server-Sent Events, `live-updates.ts`); 429 as text past the open streams a user may hold. */
function events(ctx: ConsoleContext, { req, res, query, state }: ProjectRequest, projectId: string): void {
  const { secret, session } = state;
  if (!ctx.hub.admits(session.caller.userId)) {
    res.writeHead(429, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Retry-After': '5',
      'Cache-Control': 'no-store',
    });
    res.end('Too many open live pages: close some tabs of the console.\n');
    return;
  }
  const lastEventId = Number(req.headers['last-event-id']);
  const afterParam = query.get('after');
  ctx.hub.start(
    req,
    res,
    projectStream({
      userId: session.caller.userId,
      projectId,
      // A page that does not show the end of the conversation gets no new messages.
      messagesAfter:
        afterParam === null
          ? null
          : Number.isSafeInteger(lastEventId) && lastEventId >= 0
            ? lastEventId
            : Math.max(0, Number(afterParam) || 0),
      sessionKey: query.get('session') ?? '',
      previewsKey: query.get('previews') ?? '',
      sameOrigin: ctx.sameOrigin(req),
      mcpUrl: ctx.mcpUrl(),
      session: () => ctx.deps.sessions.authenticate(secret),
      tools: ctx.tools,
      logger: ctx.deps.logger,
    }),
  );
}

/** The project's thumbnail: the same picture as `svc_get_session` with `screenshot: true` (404 when there is none). */
async function thumbnail(ctx: ConsoleContext, { res, state }: ProjectRequest, projectId: string): Promise<void> {
  const { session, viewer } = state;
  try {
    const result = await ctx.tools.getSession.result({ projectId, screenshot: true }, session.caller);
    const image = result.content.find((c) => c.type === 'image');
    if (!image?.data) return ctx.failurePage(res, notFound({ resource: 'thumbnail', reason: 'none taken' }), viewer);
    const png = Buffer.from(image.data, 'base64');
    res.writeHead(200, {
      'Content-Type': 'image/png',
      'Content-Length': String(png.length),
      'Cache-Control': 'private, max-age=3600',
    });
    res.end(png);
  } catch (error) {
    ctx.failurePage(res, error, viewer);
  }
}
