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
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/caller.js';
import type { RequestGate } from '../auth/request-gate.js';
import { sameCsrf, WEB_SESSION_TTL_MS, type WebSession, type WebSessionService } from '../auth/web-sessions.js';
import { isExpectedError, MESSAGES, notFound } from '../errors.js';
import type { Logger } from '../logger.js';
import { createToolCaller, type FormArguments, type ToolArguments, type ToolRunner } from '../mcp/tool-caller.js';
import { TOOLS } from '../mcp/tools/index.js';
import { MESSAGES_PAGE_DEFAULT, type MessagesPage, type Project, type SessionView } from '../services/resource-shapes.js';
import type { ProjectState } from '../services/project-state.js';
import type { PublicUrl } from '../services/public-url.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import { type SafeHtml } from './html.js';
import { contentSecurityPolicy, cookie, cookieSentTwice, readCookies, readForm, redirect, sendHtml } from './http-util.js';
import { LiveHub, type LiveHubOptions } from './live-updates.js';
import { errorPage, projectPage, projectsPage, signInPage, type ProjectDraft, type ShownError } from './pages.js';
import { previewsKey, renderPreviews } from './project-view.js';
import { projectStream } from './project-stream.js';
import { shown } from './shown-error.js';
import { serveStatic } from './static-assets.js';

/**
 * The session cookie (HttpOnly, SameSite=Strict); under https `__Host-svc_session`, which no other
 * host (an artifact origin under the same domain included) can set, and no path can shadow.
 */
const SESSION_COOKIE = 'svc_session';
/** Double-submit cookie of the sign-in form, before a session exists (`__Host-` under https too). */
const SIGNIN_COOKIE = 'svc_signin';

/**
 * Whether a request may act with the browser's console session: `Sec-Fetch-Site` says where it
 * came from, and only the console's own pages (`same-origin`) or the person (`none`: typed,
 * bookmarked) may; another site or another host of this one (a preview's credentialed `no-cors`
 * request, a link) gets no session and spends no request budget. Browsers that send no fetch
 * metadata are taken as before (the SameSite=Strict cookie still applies).
 */
function fromOwnPages(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

/** What the console works with. */
export interface WebConsoleDeps {
  /** Runs the tools as `tools/call` does; the console calls them through the typed caller (`mcp/tool-caller.ts`). */
  tools: ToolRunner;
  sessions: Pick<WebSessionService, 'signIn' | 'authenticate' | 'signOut'>;
  gate: Pick<RequestGate, 'admitCaller' | 'countSignInAttempt'>;
  changes: Pick<ProjectChanges, 'subscribe'>;
  /** Each of the caller's own projects' state in one read (the projects list's badges; idle ones absent). */
  projectStates(caller: Caller): Promise<ReadonlyMap<string, ProjectState>>;
  /** The `after` of the latest `limit` messages of a project the caller may read (`WorkflowService.latestPageStart`). */
  latestPageStart(caller: Caller, projectId: string, limit: number): Promise<number>;
  /** SQLite's `data_version`, to see other processes' changes. */
  onReset(listener: () => void): () => void;
  publicUrl: Pick<PublicUrl, 'get' | 'artifacts' | 'previewFrameSource' | 'origins'>;
  logger: Logger;
  live?: LiveHubOptions;
  /** The client address of a request (behind a trusted proxy, from `X-Forwarded-For`); default the socket's peer. */
  clientAddress?(req: IncomingMessage): string;
}

/**
 * A check before a console page, of the transport's guard shape (`transports/http-pipeline.ts`):
 * true lets the request through; false means it has answered (a redirect, an error page).
 */
type ConsoleGuard = ((req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>) & { readonly guardName: string };

/** Names a console guard. */
function consoleGuard(name: string, check: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>): ConsoleGuard {
  return Object.assign(check, { guardName: name });
}

/** One route of the console: its path (exact, or a prefix ending in `*`), its guards in order, its handler (every method). */
interface ConsoleRoute {
  path: string;
  guards: readonly ConsoleGuard[];
  handler(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> | void;
}

/** What the console's guards found about a signed-in request, for its handler. */
interface SignedInRequest {
  /** The session cookie's value. */
  secret: string;
  session: WebSession;
  viewer: { userName: string; csrf: string; mcpUrl: string };
  /** The form of a POST, read and checked (`form` guard); absent for GET and HEAD. */
  form?: URLSearchParams;
}

/** True for GET and HEAD (a method absent counts as GET). */
function isReading(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  return method === 'GET' || method === 'HEAD';
}

/** The console as the HTTP transport's routing table sees it. */
export interface WebConsole {
  /** Its routes, which the transport mounts behind its host check and form origin. */
  routes: readonly ConsoleRoute[];
  /** Ends the open event streams (shutdown). */
  close(): void;
  /** The user of the request's valid console session and its CSRF token, or null (the OAuth consent page asks this). */
  sessionUser(req: IncomingMessage): Promise<{ userId: string; userName: string; csrf: string } | null>;
}

const PROJECT_PATH = /^\/projects\/([^/]+)(?:\/(messages|answer|cancel|events|thumbnail\.png))?$/;

/** Builds the console. */
export function createWebConsole(deps: WebConsoleDeps): WebConsole {
  const hub = new LiveHub(deps.changes, deps.onReset, deps.logger, deps.live);

  const secure = () => deps.publicUrl.get().startsWith('https:');
  const mcpUrl = () => `${deps.publicUrl.get()}/mcp`;
  const cookieName = (name: string) => (secure() ? `__Host-${name}` : name);
  // The preview frame runs in an opaque origin (no `allow-same-origin`) in the shared path form,
  // and whenever artifacts would share the console's origin.
  const sameOrigin = (req: IncomingMessage) => {
    if (deps.publicUrl.origins === 'shared') return true;
    const origin = new URL(deps.publicUrl.artifacts()).origin;
    return origin === new URL(deps.publicUrl.get()).origin || origin === `http://${req.headers.host ?? ''}`;
  };
  const csp = () => contentSecurityPolicy(`'self' ${deps.publicUrl.previewFrameSource()}`);

  const tools = createToolCaller(TOOLS, deps.tools);

  const page = (res: ServerResponse, status: number, body: SafeHtml, headers: Record<string, string | string[]> = {}) => sendHtml(res, status, body, csp(), headers);

  const failurePage = (res: ServerResponse, error: unknown, viewer?: { userName: string; csrf: string }) => {
    if (!isExpectedError(error)) deps.logger.error({ err: error }, 'web console request failed');
    const s = shown(error);
    page(res, s.status, errorPage(s.error, viewer), s.retryAfter !== undefined ? { 'Retry-After': String(s.retryAfter) } : {});
  };

  const signIn = async (req: IncomingMessage, res: ServerResponse) => {
    const cookies = readCookies(req);
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (await deps.sessions.authenticate(cookies.get(cookieName(SESSION_COOKIE)))) return redirect(res, '/projects');
      const csrf = cookies.get(cookieName(SIGNIN_COOKIE)) || randomBytes(24).toString('base64url');
      const planted = cookieSentTwice(req, cookieName(SESSION_COOKIE)) || cookieSentTwice(req, cookieName(SIGNIN_COOKIE));
      const warning = planted
        ? { code: -32600, message: MESSAGES.invalidRequest, hint: 'This browser sends two console cookies of the same name: a page on another port of this host has set one. Clear the cookies of this site, then sign in.' }
        : undefined;
      return page(res, planted ? 400 : 200, signInPage(csrf, warning, mcpUrl()), { 'Set-Cookie': cookie(cookieName(SIGNIN_COOKIE), csrf, 3600, secure()) });
    }
    if (req.method !== 'POST') return methodNotAllowed(res);
    const form = await readForm(req);
    if (typeof form === 'string') return badForm(res, form);
    const csrf = cookies.get(cookieName(SIGNIN_COOKIE));
    if (!csrf || !sameCsrf(csrf, form.get('csrf'))) {
      const fresh = randomBytes(24).toString('base64url');
      return page(res, 400, signInPage(fresh, { code: -32600, message: MESSAGES.invalidRequest, hint: 'The sign-in form expired: try again.' }, mcpUrl()), {
        'Set-Cookie': cookie(cookieName(SIGNIN_COOKIE), fresh, 3600, secure()),
      });
    }
    try {
      await deps.gate.countSignInAttempt(deps.clientAddress?.(req) ?? req.socket.remoteAddress ?? 'unknown');
    } catch (error) {
      const s = shown(error);
      return page(res, 429, signInPage(csrf, s.error, mcpUrl()), { 'Retry-After': String(s.retryAfter ?? 60) });
    }
    const opened = await deps.sessions.signIn(form.get('credential') ?? '');
    if (!opened) {
      deps.logger.warn({ address: deps.clientAddress?.(req) ?? req.socket.remoteAddress }, 'console sign-in refused');
      return page(res, 401, signInPage(csrf, { code: -32001, message: MESSAGES.unauthenticated }, mcpUrl()));
    }
    deps.logger.info({ user: opened.session.caller.userName }, 'console sign-in');
    return redirect(res, '/projects', {
      'Set-Cookie': [cookie(cookieName(SESSION_COOKIE), opened.secret, Math.floor(WEB_SESSION_TTL_MS / 1000), secure()), cookie(cookieName(SIGNIN_COOKIE), '', 0, secure())],
    });
  };

  const renderProject = async (
    res: ServerResponse,
    req: IncomingMessage,
    session: WebSession,
    projectId: string,
    query: URLSearchParams,
    status = 200,
    extra: { error?: ShownError; errorAt?: 'send' | 'answer' | 'session'; draft?: { message: string; kind: string } } = {},
  ) => {
    const { caller } = session;
    const viewer = { userName: caller.userName, csrf: session.csrf, mcpUrl: mcpUrl() };
    let project: Project;
    let view: SessionView;
    let messages: MessagesPage;
    let previews: Awaited<ReturnType<typeof renderPreviews>>;
    const after = numberOrText(query.get('after'));
    const limit = numberOrText(query.get('limit'));
    try {
      project = await tools.getProject({ projectId }, caller);
      view = await tools.getSession({ projectId: project.id }, caller);
      // Without `after`, the page opens at the latest messages: one read of the newest seq gives
      // the `after` of the last page (a size the tool then checks like any other).
      const start = after === undefined && (limit === undefined || typeof limit === 'number') ? await deps.latestPageStart(caller, project.id, typeof limit === 'number' ? limit : MESSAGES_PAGE_DEFAULT) : after;
      messages = await tools.getMessages.fromForm({ projectId: project.id, ...(start !== undefined && { after: start }), ...(limit !== undefined && { limit }) }, caller);
      // Inside the try: a QR code that cannot be made still gets an HTML error page.
      previews = await renderPreviews(view.previewUrls, sameOrigin(req), projectId);
    } catch (error) {
      return failurePage(res, error, viewer);
    }
    page(
      res,
      status,
      projectPage(viewer, {
        project,
        session: view,
        page: messages,
        limit: typeof limit === 'number' ? limit : MESSAGES_PAGE_DEFAULT,
        previews,
        previewsKey: previewsKey(view.previewUrls),
        ...extra,
      }),
    );
  };

  const projectAction = async (req: IncomingMessage, res: ServerResponse, session: WebSession, projectId: string, action: 'messages' | 'answer' | 'cancel', form: URLSearchParams) => {
    const { caller } = session;
    try {
      if (action === 'cancel') {
        const workflowId = form.get('workflowId');
        await tools.cancelWorkflow({ projectId, ...(workflowId && { workflowId }) }, caller);
      } else {
        const args: FormArguments<ToolArguments<typeof TOOLS.sendMessage>> = { projectId };
        const message = form.get('message');
        if (message !== null) args.message = message;
        if (action === 'messages') {
          const kind = form.get('kind');
          if (kind !== null) args.kind = kind;
        } else {
          const questionId = form.get('questionId');
          if (questionId) args.questionId = questionId;
        }
        await tools.sendMessage.fromForm(args, caller);
      }
    } catch (error) {
      const s = shown(error);
      if (s.status === 500) deps.logger.error({ err: error }, 'web console action failed');
      const draft = action === 'messages' ? { message: form.get('message') ?? '', kind: form.get('kind') ?? 'build' } : undefined;
      return renderProject(res, req, session, projectId, new URLSearchParams(), s.status, { error: s.error, errorAt: action === 'messages' ? 'send' : action === 'answer' && s.error.code === -32602 ? 'answer' : 'session', ...(draft && { draft }) });
    }
    return redirect(res, `/projects/${encodeURIComponent(projectId)}`);
  };

  const events = (req: IncomingMessage, res: ServerResponse, secret: string, session: WebSession, projectId: string, query: URLSearchParams) => {
    if (!hub.admits(session.caller.userId)) {
      res.writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '5', 'Cache-Control': 'no-store' });
      res.end('Too many open live pages: close some tabs of the console.\n');
      return;
    }
    const lastEventId = Number(req.headers['last-event-id']);
    const afterParam = query.get('after');
    hub.start(
      req,
      res,
      projectStream({
        userId: session.caller.userId,
        projectId,
        // A page that does not show the end of the conversation gets no new messages.
        messagesAfter: afterParam === null ? null : Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : Math.max(0, Number(afterParam) || 0),
        sessionKey: query.get('session') ?? '',
        previewsKey: query.get('previews') ?? '',
        sameOrigin: sameOrigin(req),
        mcpUrl: mcpUrl(),
        session: () => deps.sessions.authenticate(secret),
        tools,
        logger: deps.logger,
      }),
    );
  };

  /** The project's thumbnail: the same picture as `svc_get_session` with `screenshot: true` (404 when there is none). */
  const thumbnail = async (res: ServerResponse, session: WebSession, projectId: string, viewer: { userName: string; csrf: string }) => {
    try {
      const result = await tools.getSession.result({ projectId, screenshot: true }, session.caller);
      const image = result.content.find((c) => c.type === 'image');
      if (!image?.data) return failurePage(res, notFound({ resource: 'thumbnail', reason: 'none taken' }), viewer);
      const png = Buffer.from(image.data, 'base64');
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(png.length), 'Cache-Control': 'private, max-age=3600' });
      res.end(png);
    } catch (error) {
      failurePage(res, error, viewer);
    }
  };

  // The console's guards (docs/architecture.md "The HTTP pipeline"), after the transport's host
  // check and form origin; what they find (the session, the form) is kept for the route's handler.
  const found = new WeakMap<IncomingMessage, SignedInRequest>();
  const signedInOf = (req: IncomingMessage): SignedInRequest => {
    const state = found.get(req);
    if (!state) throw new Error('console route mounted without its session guard');
    return state;
  };

  /** A valid session cookie, sent from the console's own pages (`fromOwnPages`): else to the sign-in page. */
  const sessionGuard = consoleGuard('session', async (req, res) => {
    const cookies = readCookies(req);
    // A request another site or another host started never acts with the session (fromOwnPages).
    const secret = fromOwnPages(req) ? cookies.get(cookieName(SESSION_COOKIE)) : undefined;
    const session = await deps.sessions.authenticate(secret);
    if (!session || secret === undefined) {
      // A stale cookie is dropped; the browser goes to the sign-in page.
      const headers = secret !== undefined ? { 'Set-Cookie': cookie(cookieName(SESSION_COOKIE), '', 0, secure()) } : undefined;
      if (!isReading(req)) req.resume();
      redirect(res, '/signin', headers);
      return false;
    }
    found.set(req, { secret, session, viewer: { userName: session.caller.userName, csrf: session.csrf, mcpUrl: mcpUrl() } });
    return true;
  });

  /** A change is a POST of a form of at most 256 KiB (`readForm`) carrying the session's CSRF token: else 405, 413, 415 or 403. */
  const formGuard = consoleGuard('form', (req, res) => {
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
        page(res, 403, errorPage({ code: -32600, message: MESSAGES.invalidRequest, hint: 'The form is out of date or came from another site: reload the page and try again.' }, state.viewer));
        return false;
      }
      state.form = body;
      return true;
    });
  });

  /** Every page, form and event stream counts as one request against the user's rate limit, like a tool call. */
  const rateLimitGuard = consoleGuard('rateLimit', async (req, res) => {
    const { session, viewer } = signedInOf(req);
    try {
      const { rate } = await deps.gate.admitCaller(session.caller);
      res.setHeader('X-RateLimit-Limit', String(rate.limit));
      res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
      res.setHeader('X-RateLimit-Reset', String(rate.resetAt));
      return true;
    } catch (error) {
      failurePage(res, error, viewer);
      return false;
    }
  });

  const staticFile = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (isReading(req) && (await serveStatic(res, path, req.method === 'HEAD'))) return;
    return failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }));
  };

  // Signing out is never refused, not even past the request limit.
  const signOut = async (_req: IncomingMessage, res: ServerResponse, state: SignedInRequest): Promise<void> => {
    if (!state.form) return methodNotAllowed(res);
    await deps.sessions.signOut(state.secret);
    deps.logger.info({ user: state.session.caller.userName }, 'console sign-out');
    return redirect(res, '/signin', { 'Set-Cookie': cookie(cookieName(SESSION_COOKIE), '', 0, secure()) });
  };

  // `/projects` and `/projects/...`, after the session, form and rate limit guards.
  const projectPages = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> => {
    const method = req.method ?? 'GET';
    const { secret, session, viewer, form } = signedInOf(req);
    if (path === '/projects') {
      if (!form) {
        try {
          const { projects } = await tools.listProjects({}, session.caller);
          return page(res, 200, projectsPage(viewer, projects, await deps.projectStates(session.caller)));
        } catch (error) {
          return failurePage(res, error, viewer);
        }
      }
      const draft: ProjectDraft = { name: form.get('name') ?? '', description: form.get('description') ?? '', visibility: form.get('visibility') ?? 'private' };
      const args: FormArguments<ToolArguments<typeof TOOLS.createProject>> = {};
      const name = form.get('name');
      if (name !== null) args.name = name;
      const description = form.get('description');
      if (description !== null && description !== '') args.description = description;
      const visibility = form.get('visibility');
      if (visibility !== null) args.visibility = visibility;
      try {
        const created = await tools.createProject.fromForm(args, session.caller);
        return redirect(res, `/projects/${created.id}`);
      } catch (error) {
        const s = shown(error);
        if (s.status === 500) deps.logger.error({ err: error }, 'web console action failed');
        let projects: Project[] = [];
        let states: ReadonlyMap<string, ProjectState> = new Map();
        try {
          projects = (await tools.listProjects({}, session.caller)).projects;
          states = await deps.projectStates(session.caller);
        } catch {
          // The list is only shown beside the error.
        }
        return page(res, s.status, projectsPage(viewer, projects, states, s.error, draft), s.retryAfter !== undefined ? { 'Retry-After': String(s.retryAfter) } : {});
      }
    }
    const match = PROJECT_PATH.exec(path);
    if (!match) return failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }), viewer);
    let projectId: string;
    try {
      projectId = decodeURIComponent(match[1]!);
    } catch {
      return failurePage(res, notFound({ resource: 'page', reason: 'unknown path' }), viewer);
    }
    const action = match[2] as 'messages' | 'answer' | 'cancel' | 'events' | 'thumbnail.png' | undefined;
    if (action === 'events') {
      if (method !== 'GET') return methodNotAllowed(res);
      // The first read checks access with the tools' rule before the stream opens.
      try {
        await tools.getProject({ projectId }, session.caller);
      } catch (error) {
        return failurePage(res, error, viewer);
      }
      return events(req, res, secret, session, projectId, query);
    }
    if (action === 'thumbnail.png') {
      if (form) return methodNotAllowed(res);
      return thumbnail(res, session, projectId, viewer);
    }
    if (action === undefined) {
      if (form) return methodNotAllowed(res);
      return renderProject(res, req, session, projectId, query);
    }
    if (!form) return methodNotAllowed(res);
    return projectAction(req, res, session, projectId, action, form);
  };

  return {
    routes: [
      { path: '/', guards: [sessionGuard], handler: (_req, res) => redirect(res, '/projects') },
      { path: '/signin', guards: [], handler: (req, res) => signIn(req, res) },
      { path: '/signout', guards: [sessionGuard, formGuard], handler: (req, res) => signOut(req, res, signedInOf(req)) },
      { path: '/projects', guards: [sessionGuard, formGuard, rateLimitGuard], handler: projectPages },
      { path: '/projects/*', guards: [sessionGuard, formGuard, rateLimitGuard], handler: projectPages },
      { path: '/console/*', guards: [], handler: staticFile },
      { path: '/favicon.ico', guards: [], handler: staticFile },
    ],
    close: () => hub.closeAll(),
    sessionUser: async (req) => {
      if (!fromOwnPages(req)) return null;
      const session = await deps.sessions.authenticate(readCookies(req).get(cookieName(SESSION_COOKIE)));
      return session ? { userId: session.caller.userId, userName: session.caller.userName, csrf: session.csrf } : null;
    },
  };
}

/** A query number as a number, other text as it is (the tool refuses it with its own error). */
function numberOrText(value: string | null): number | string | undefined {
  if (value === null || value === '') return undefined;
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}

function methodNotAllowed(res: ServerResponse): void {
  res.writeHead(405, { Allow: 'GET, HEAD, POST', 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end('Method not allowed\n');
}

function badForm(res: ServerResponse, problem: 'too_large' | 'unsupported' | 'aborted'): void {
  if (problem === 'aborted') return void res.destroy();
  const status = problem === 'too_large' ? 413 : 415;
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
  res.end(problem === 'too_large' ? 'The form is too large.\n' : 'Send the form as application/x-www-form-urlencoded.\n');
}
