/**
 * The console's pages (docs/console.md "Web console"): server-rendered HTML that works as plain forms; the
 * one static script only adds live updates. Every value is escaped by the `html` template.
 */
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import { IDLE, type ProjectState } from '../services/project-state.js';
import type { MessagesPage, Project, SessionView } from '../services/resource-shapes.js';
import { consoleIntro } from './host-guide.js';
import { html, type SafeHtml } from './html.js';
import { markupKey, renderMessages, renderSession } from './project-view.js';
import { timeTag } from './time-tag.js';

/** A contract error as the console shows it: code, exact message, and the listed issues. */
export interface ShownError {
  code: number;
  message: string;
  issues?: string[];
  /** The parameters the error is about (`name`, `message`): the form fields it is shown next to. */
  fields?: string[];
  hint?: string;
}

/** The signed-in user, for the header. */
interface Viewer {
  userName: string;
  csrf: string;
  /** This server's `/mcp`, for the lines that connect an MCP host (`host-guide.ts`). */
  mcpUrl?: string;
}

/** Limits shown next to the create form (the tool's). */
const NAME_MAX = 255;
const DESCRIPTION_MAX = 1000;

function layout(title: string, body: SafeHtml, viewer?: Viewer, bodyAttributes: SafeHtml = html``): SafeHtml {
  const nav = viewer
    ? html`<nav><a href="/projects">Projects</a><span class="user">Signed in as <strong id="user-name">${viewer.userName}</strong></span>
<form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="${viewer.csrf}"><button type="submit" id="sign-out">Sign out</button></form></nav>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · mobile-builder-mcp</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/console.css">
<script src="/console/console.js" defer></script>
</head><body${bodyAttributes}>
<header><a class="brand" href="/">mobile-builder-mcp</a>${nav}</header>
<main>${body}</main>
</body></html>`;
}

/** The error box of a form or page (`role="alert"`). */
export function errorBox(error: ShownError | undefined): SafeHtml {
  if (!error) return html``;
  return html`<div class="error" role="alert" id="error"><p><span class="code">${error.code}</span> <span class="message">${error.message}</span></p>${
    error.issues && error.issues.length > 0 ? html`<ul>${error.issues.map((i) => html`<li>${i}</li>`)}</ul>` : ''
  }${error.hint ? html`<p class="hint">${error.hint}</p>` : ''}</div>`;
}

/**
 * Where a form shows `error`: next to the first of `fields` it concerns (the field gets
 * `autofocus`, so the browser scrolls to it, and `aria-invalid`), else above the form.
 */
function fieldError(error: ShownError | undefined, fields: string[]): { at: string | null; box: SafeHtml } {
  if (!error) return { at: null, box: html`` };
  const at = fields.find((f) => error.fields?.includes(f)) ?? null;
  return { at, box: errorBox(error) };
}

/** Attributes of a form field that `error` concerns. */
function invalid(field: string, at: string | null): SafeHtml {
  return field === at ? html` autofocus aria-invalid="true" aria-describedby="error"` : html``;
}

/** `/signin`: paste an API token or a one-time login code. */
export function signInPage(csrf: string, error?: ShownError, mcpUrl?: string): SafeHtml {
  return layout(
    'Sign in',
    html`${mcpUrl ? consoleIntro(mcpUrl, true) : ''}<h1>Sign in</h1>
<p>Paste one of your API tokens (<code>svc_…</code>, from <code>mobile-builder-mcp token create --user NAME</code>) or a one-time login code (<code>mobile-builder-mcp login-code --user NAME</code>). The token is sent once; the browser keeps only a session cookie.</p>
${errorBox(error)}
<form method="post" action="/signin" class="card">
<input type="hidden" name="csrf" value="${csrf}">
<label for="credential">API token or login code</label>
<input id="credential" name="credential" type="password" required autocomplete="off" spellcheck="false" maxlength="200">
<button type="submit" id="sign-in">Sign in</button>
</form>`,
  );
}

/** Values the create form keeps after a refused submission. */
export interface ProjectDraft {
  name: string;
  description: string;
  visibility: string;
}

/**
 * The state badge of a project in the list: `idle`, `running: build step 2/4`, `waiting for input`,
 * `cancelling`, with `· N queued` when workflows wait behind the active one.
 */
export function stateBadge(state: ProjectState): SafeHtml {
  const { active, queued } = state;
  let text = 'idle';
  let key = 'idle';
  if (active) {
    key = active.status;
    if (active.status === 'running')
      text =
        active.step.total > 0
          ? `running: ${active.kind} step ${active.step.index}/${active.step.total}`
          : `running: ${active.kind}`;
    else text = active.status.replace(/_/g, ' ');
  } else if (queued > 0) key = 'queued';
  const queue = queued > 0 ? `${active ? ' · ' : ''}${queued} queued` : '';
  return html`<span class="state" data-state="${key}" data-queued="${queued}">${active || queued === 0 ? text : ''}${queue}</span>`;
}

/** What the projects list shows: the caller's projects and their states, and a failed creation's error and form. */
export interface ProjectsList {
  projects: Project[];
  /** Each listed project's state (idle ones absent). */
  states: ReadonlyMap<string, ProjectState>;
  /** Why the creation failed, next to the field it concerns. */
  error?: ShownError;
  /** The creation form as it was sent. */
  draft?: ProjectDraft;
}

/**
 * `/projects`: the form to create a project first (its error next to the field it concerns), then
 * the caller's own projects, newest first, each with its state.
 */
export function projectsPage(viewer: Viewer, { projects, states, error, draft }: ProjectsList): SafeHtml {
  const list =
    projects.length > 0
      ? html`<ul id="projects" class="projects">${projects.map(
          (p) =>
            html`<li data-project-id="${p.id}"><a href="/projects/${p.id}">${p.name}</a> <span class="badge">${p.visibility}</span> ${stateBadge(states.get(p.id) ?? IDLE)}${
              p.description ? html`<p class="muted">${p.description}</p>` : ''
            }<p class="meta">Updated ${timeTag(p.updatedAt)}</p></li>`,
        )}</ul>`
      : html`<p id="no-projects" class="muted">No projects yet.</p>`;
  const visibility = draft?.visibility === 'public' ? 'public' : 'private';
  const { at, box } = fieldError(error, ['name', 'description', 'visibility']);
  return layout(
    'Projects',
    html`<h1>Your projects</h1>
${viewer.mcpUrl ? consoleIntro(viewer.mcpUrl, projects.length === 0) : ''}
<section class="create" aria-labelledby="new-title"><h2 id="new-title">New project</h2>
${at === null ? box : ''}
<form method="post" action="/projects" class="card" id="create-project">
<input type="hidden" name="csrf" value="${viewer.csrf}">
<label for="name">Name</label><input id="name" name="name" type="text" maxlength="${NAME_MAX}" value="${draft?.name ?? ''}"${invalid('name', at)}>
${at === 'name' ? box : ''}
<label for="description">Description (optional)</label><textarea id="description" name="description" maxlength="${DESCRIPTION_MAX}" rows="2"${invalid('description', at)}>${draft?.description ?? ''}</textarea>
${at === 'description' ? box : ''}
<fieldset><legend>Visibility</legend>
<label class="option"><input type="radio" name="visibility" value="private"${visibility === 'private' ? html` checked` : ''}> private (only you)</label>
<label class="option"><input type="radio" name="visibility" value="public"${visibility === 'public' ? html` checked` : ''}> public (anyone with the link)</label></fieldset>
${at === 'visibility' ? box : ''}
<button type="submit" id="create">Create project</button>
</form></section>
<h2>Projects</h2>
${list}`,
    viewer,
  );
}

/** What the project page shows. */
export interface ProjectPageModel {
  project: Project;
  session: SessionView;
  page: MessagesPage;
  /** Messages per page. */
  limit: number;
  previews: SafeHtml;
  /** The key of the shown previews (`previewsKey`): the page's event stream resends them only when it changes. */
  previewsKey: string;
  error?: ShownError;
  /** Where the error happened: next to the send form, under the answer box (while the question is pending), or at the top. */
  errorAt?: 'send' | 'answer' | 'session' | 'env';
  draft?: { message: string; kind: string };
  /** The Environment section, for the project's owner (`environment-view.ts`). */
  environment?: SafeHtml;
}

/**
 * `/projects/<id>`: on the left, the session panel (active step and progress, question, queue,
 * last workflow) and the send form, which stay in view while the page scrolls; on the right, the
 * conversation, newest first, one folded entry per workflow, with earlier pages on demand; then
 * the web preview and the deployments.
 */
export function projectPage(viewer: Viewer, model: ProjectPageModel): SafeHtml {
  const { project, session, page } = model;
  const ctx = { projectId: project.id, csrf: viewer.csrf, mcpUrl: viewer.mcpUrl };
  const tail = !page.hasMore;
  const answerError = model.errorAt === 'answer' && session.pendingQuestion ? errorBox(model.error) : undefined;
  const topError =
    (model.errorAt === 'session' || model.errorAt === 'answer') && !answerError ? errorBox(model.error) : '';
  // The page's stream compares panels without the error: the next push drops it only when the session changed.
  const sessionPanel = renderSession(ctx, session, answerError);
  const sessionKey = markupKey(answerError ? renderSession(ctx, session) : sessionPanel);
  // The event stream sends new messages only to a page that shows the end of the conversation.
  const events = `/projects/${project.id}/events?session=${sessionKey}&previews=${model.previewsKey}${tail ? `&after=${page.nextAfter}` : ''}`;
  const kind = model.draft?.kind === 'deploy' ? 'deploy' : 'build';
  const sendError = model.errorAt === 'send' ? fieldError(model.error, ['message', 'kind']) : { at: null, box: html`` };
  // Seqs of a project's messages grow by one (docs/contract.md#tools), so the page before this one
  // starts `limit` messages earlier.
  const first = page.messages[0]?.seq;
  const earlier = first !== undefined && first > 1 ? Math.max(0, first - 1 - model.limit) : null;
  const newer = page.hasMore
    ? html`<nav class="pager"><a class="later" href="/projects/${project.id}?after=${page.nextAfter}&amp;limit=${model.limit}">Later messages</a> <a href="/projects/${project.id}">Latest</a></nav>`
    : '';
  const older =
    earlier !== null
      ? html`<nav class="pager"><a class="earlier" href="/projects/${project.id}?after=${earlier}&amp;limit=${model.limit}">Earlier messages</a></nav>`
      : '';
  return layout(
    project.name,
    html`<h1 id="project-name">${project.name}</h1>
<p class="meta"><span class="badge">${project.visibility}</span> Created ${timeTag(project.createdAt)}${
      project.description ? html` · ${project.description}` : ''
    } <span id="live" class="live" data-state="off">live updates off</span></p>
${topError}
<div class="columns project">
<aside class="side" aria-label="Session">
<section aria-labelledby="session-title"><h2 id="session-title">Session</h2><div id="session">${sessionPanel}</div></section>
<section aria-labelledby="send-title"><h2 id="send-title">Send an instruction</h2>
${sendError.at === null ? sendError.box : ''}
<form method="post" action="/projects/${project.id}/messages" class="card" id="send">
<input type="hidden" name="csrf" value="${viewer.csrf}">
<label for="message">Instruction</label><textarea id="message" name="message" rows="3" maxlength="${MAX_MESSAGE_LENGTH}"${invalid('message', sendError.at)}>${model.draft?.message ?? ''}</textarea>
${sendError.at === 'message' ? sendError.box : ''}
<fieldset><legend>Kind</legend>
<label class="option"><input type="radio" name="kind" value="build"${kind === 'build' ? html` checked` : ''}> build</label>
<label class="option"><input type="radio" name="kind" value="deploy"${kind === 'deploy' ? html` checked` : ''}> deploy</label></fieldset>
${sendError.at === 'kind' ? sendError.box : ''}
<button type="submit" id="send-button">Send</button>
</form></section>
${model.environment ?? ''}
</aside>
<div class="main-column">
<section aria-labelledby="conversation-title"><h2 id="conversation-title">Conversation <span class="meta">newest first</span></h2>${newer}
<ol id="messages" class="messages" data-tail="${tail ? 'yes' : 'no'}">${renderMessages(page.messages)}</ol>${older}</section>
<section aria-labelledby="previews-title"><h2 id="previews-title">Preview and deployments</h2><div id="previews">${model.previews}</div></section>
</div>
</div>`,
    viewer,
    html` data-events="${events}"`,
  );
}

/** A page that only shows an error (unknown project, another user's private project, rate limit). */
export function errorPage(error: ShownError, viewer?: Viewer): SafeHtml {
  return layout(
    `Error ${error.code}`,
    html`<h1>Something went wrong</h1>${errorBox(error)}<p><a href="/projects">Back to your projects</a></p>`,
    viewer,
  );
}
