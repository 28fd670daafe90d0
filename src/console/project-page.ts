/**
 * One project's page in the console, `/projects/<id>` (docs/contract.md "Web console"): its session,
 * conversation, previews and deployments, and the forms that send a message, answer a question or
 * cancel a workflow through the tools.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSession } from '../auth/web-sessions.js';
import type { FormArguments, ToolArguments } from '../mcp/tool-caller.js';
import type { TOOLS } from '../mcp/tools/index.js';
import {
  MESSAGES_PAGE_DEFAULT,
  type MessagesPage,
  type Project,
  type SessionView,
} from '../services/resource-shapes.js';
import type { ConsoleContext } from './console-context.js';
import { redirect } from './http-util.js';
import { errorBox, projectPage, type ShownError } from './pages.js';
import { renderEnvironment } from './environment-view.js';
import type { SafeHtml } from './html.js';
import { previewsKey, renderPreviews } from './project-view.js';
import { shown } from './shown-error.js';

/** A project page to render: the request, the signed-in session, the project and the page's query (`after`, `limit`). */
export interface ProjectPageRequest {
  req: IncomingMessage;
  res: ServerResponse;
  session: WebSession;
  projectId: string;
  query: URLSearchParams;
  /** The HTTP status (default 200; an action's error status when the page shows its error). */
  status?: number;
  /** An action's error, where the page shows it, and the message form as it was sent. */
  extra?: {
    error?: ShownError;
    errorAt?: 'send' | 'answer' | 'session' | 'env';
    draft?: { message: string; kind: string };
  };
}

/** Sends the project page (or the error page of the first read that fails: access, a bad `after` or `limit`). */
export async function renderProject(ctx: ConsoleContext, request: ProjectPageRequest): Promise<void> {
  const { res, session, projectId, query } = request;
  const { caller } = session;
  const viewer = { userName: caller.userName, csrf: session.csrf, mcpUrl: ctx.mcpUrl() };
  let project: Project;
  let view: SessionView;
  let messages: MessagesPage;
  let previews: Awaited<ReturnType<typeof renderPreviews>>;
  const after = numberOrText(query.get('after'));
  const limit = numberOrText(query.get('limit'));
  try {
    project = await ctx.tools.getProject({ projectId }, caller);
    view = await ctx.tools.getSession({ projectId: project.id }, caller);
    // Without `after`, the page opens at the latest messages: one read of the newest seq gives
    // the `after` of the last page (a size the tool then checks like any other).
    const start =
      after === undefined && (limit === undefined || typeof limit === 'number')
        ? await ctx.deps.latestPageStart(caller, project.id, typeof limit === 'number' ? limit : MESSAGES_PAGE_DEFAULT)
        : after;
    messages = await ctx.tools.getMessages.fromForm(
      { projectId: project.id, ...(start !== undefined && { after: start }), ...(limit !== undefined && { limit }) },
      caller,
    );
    // Inside the try: a QR code that cannot be made still gets an HTML error page.
    previews = await renderPreviews(view.previewUrls, ctx.sameOrigin(request.req), projectId);
  } catch (error) {
    return ctx.failurePage(res, error, viewer);
  }
  const environment = await environmentOf(ctx, request);
  ctx.page(
    res,
    request.status ?? 200,
    projectPage(viewer, {
      ...(environment && { environment }),
      project,
      session: view,
      page: messages,
      limit: typeof limit === 'number' ? limit : MESSAGES_PAGE_DEFAULT,
      previews,
      previewsKey: previewsKey(view.previewUrls),
      ...request.extra,
    }),
  );
}

/** The Environment section for the project's owner; undefined for anyone else (or when it cannot be read). */
async function environmentOf(ctx: ConsoleContext, request: ProjectPageRequest): Promise<SafeHtml | undefined> {
  const { session, projectId, extra } = request;
  const entries = await ctx.deps.environment.list(session.caller, projectId).catch(() => undefined);
  if (!entries) return undefined;
  const error = extra?.errorAt === 'env' ? errorBox(extra.error) : undefined;
  return renderEnvironment(projectId, session.csrf, entries, error);
}

/**
 * The Environment form (`op` `set` or `unset`, docs/console.md): the owner's alone; then 303 to the
 * project page, or the page with the refusal under the form. The value is never sent back.
 */
export async function environmentAction(
  ctx: ConsoleContext,
  request: Omit<ProjectActionRequest, 'action'>,
): Promise<void> {
  const { res, session, projectId, form } = request;
  const name = form.get('name') ?? '';
  try {
    if (form.get('op') === 'unset') await ctx.deps.environment.unset(session.caller, projectId, name);
    else
      await ctx.deps.environment.set(session.caller, projectId, {
        name,
        value: form.get('value') ?? '',
        secret: form.get('secret') === 'yes',
      });
  } catch (error) {
    const s = shown(error);
    if (s.status === 500) ctx.deps.logger.error({ err: error }, 'web console environment change failed');
    return renderRefusal(ctx, request, s, { errorAt: s.status === 400 ? 'env' : 'session' });
  }
  return redirect(res, `/projects/${encodeURIComponent(projectId)}`);
}

/** A project form (`messages`, `answer`, `cancel`) posted with its checked `form`. */
export interface ProjectActionRequest {
  req: IncomingMessage;
  res: ServerResponse;
  session: WebSession;
  projectId: string;
  action: 'messages' | 'answer' | 'cancel';
  form: URLSearchParams;
}

/** Runs a project form through its tool, then 303 to the project page; on an error, the page with the error where it belongs. */
export async function projectAction(ctx: ConsoleContext, request: ProjectActionRequest): Promise<void> {
  const { res, session, projectId, action, form } = request;
  const { caller } = session;
  try {
    if (action === 'cancel') {
      const workflowId = form.get('workflowId');
      await ctx.tools.cancelWorkflow({ projectId, ...(workflowId && { workflowId }) }, caller);
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
      await ctx.tools.sendMessage.fromForm(args, caller);
    }
  } catch (error) {
    const s = shown(error);
    if (s.status === 500) ctx.deps.logger.error({ err: error }, 'web console action failed');
    const draft =
      action === 'messages' ? { message: form.get('message') ?? '', kind: form.get('kind') ?? 'build' } : undefined;
    const errorAt =
      action === 'messages' ? 'send' : action === 'answer' && s.error.code === -32602 ? 'answer' : 'session';
    return renderRefusal(ctx, request, s, { errorAt, ...(draft && { draft }) });
  }
  return redirect(res, `/projects/${encodeURIComponent(projectId)}`);
}

/** A query number as a number, other text as it is (the tool refuses it with its own error). */
/** The project page again, with the status of the refused form and `extra` (where the error shows, the draft). */
function renderRefusal(
  ctx: ConsoleContext,
  request: Omit<ProjectActionRequest, 'action'>,
  refusal: ReturnType<typeof shown>,
  extra: Omit<NonNullable<ProjectPageRequest['extra']>, 'error'>,
): Promise<void> {
  const { req, res, session, projectId } = request;
  const query = new URLSearchParams();
  return renderProject(ctx, {
    req,
    res,
    session,
    projectId,
    query,
    status: refusal.status,
    extra: { error: refusal.error, ...extra },
  });
}

function numberOrText(value: string | null): number | string | undefined {
  if (value === null || value === '') return undefined;
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}
