/**
 * The live parts of a project page (README "Web console"): the session panel (active workflow,
 * queue, pending question, last workflow), the previews panel (web preview frame, deployments
 * with QR codes) and conversation messages. Each is rendered whole on the server, both for the
 * first page and for every Server-Sent Event, so the page works without script.
 */
import { createHash } from 'node:crypto';
import QRCode from 'qrcode';
import type { MessageView, PendingQuestion, PreviewUrl, SessionView, WorkflowView } from '../services/resource-shapes.js';
import { html, raw, type SafeHtml } from './html.js';

/** Longest instruction or text answer, in characters (the tool's limit). */
const MAX_MESSAGE_CHARS = 20_000;

/** What the forms of a panel need. */
interface FormContext {
  projectId: string;
  csrf: string;
}

/** `Step 2/4: Generating the app screens`, or the status when no step has run. */
function stepText(workflow: WorkflowView): string {
  const { index, total, name } = workflow.step;
  if (total === 0) return 'not started';
  return `Step ${index}/${total}${name ? `: ${name}` : ''}`;
}

function statusBadge(status: string): SafeHtml {
  return html`<span class="status" data-status="${status}">${status.replace(/_/g, ' ')}</span>`;
}

function cancelForm(ctx: FormContext, workflowId: string, label: string): SafeHtml {
  return html`<form method="post" action="/projects/${ctx.projectId}/cancel" class="inline">
<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="workflowId" value="${workflowId}">
<button type="submit" class="danger" data-action="cancel">${label}</button></form>`;
}

function questionForm(ctx: FormContext, question: PendingQuestion): SafeHtml {
  const hidden = html`<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="questionId" value="${question.questionId}">`;
  let input: SafeHtml;
  if (question.kind === 'code') {
    input = html`<p class="hint">This is a code question for an MCP host's model: answer it with svc_send_message, or answer <code>skip</code> here.</p>
<label for="answer">Answer</label><textarea id="answer" name="message" required maxlength="${question.maxLength ?? MAX_MESSAGE_CHARS}" rows="3"></textarea>`;
  } else if (question.options && question.options.length > 0) {
    input = html`<fieldset><legend>Choose one</legend>${question.options.map(
      (option) => html`<label class="option"><input type="radio" name="message" value="${option}" required> ${option}</label>`,
    )}</fieldset>`;
  } else {
    input = html`<label for="answer">Answer</label><input id="answer" name="message" type="text" required maxlength="${MAX_MESSAGE_CHARS}"${question.pattern ? html` pattern="${question.pattern}" title="Must match ${question.pattern}"` : ''} autocomplete="off">${
      question.pattern ? html`<p class="hint">Must match <code>${question.pattern}</code>.</p>` : ''
    }`;
  }
  return html`<section id="question" class="question" aria-labelledby="question-title">
<h3 id="question-title">The building agent asks</h3>
<p class="prompt">${question.prompt}</p>
<form method="post" action="/projects/${ctx.projectId}/answer">${hidden}${input}<button type="submit" data-action="answer">Answer</button></form>
</section>`;
}

function workflowLine(workflow: WorkflowView): SafeHtml {
  return html`<span class="kind">${workflow.kind}</span> ${statusBadge(workflow.status)} <span class="step">${stepText(workflow)}</span>`;
}

/** The session panel (`#session`): what runs, what waits, what is asked, what ran last. */
export function renderSession(ctx: FormContext, session: SessionView): SafeHtml {
  const active = session.activeWorkflow;
  const activePart = active
    ? html`<div id="active-workflow" class="workflow" data-workflow-id="${active.id}" data-status="${active.status}">
<p>${workflowLine(active)}</p>
<progress max="${Math.max(active.step.total, 1)}" value="${active.step.index}">${stepText(active)}</progress>
${active.status === 'cancelling' ? '' : cancelForm(ctx, active.id, `Cancel this ${active.kind}`)}
</div>`
    : html`<p id="no-active" class="muted">No workflow is running.</p>`;
  const queue =
    session.queuedWorkflows.length > 0
      ? html`<h3>Queue</h3><ol id="queue">${session.queuedWorkflows.map(
          (w) => html`<li data-workflow-id="${w.id}">${workflowLine(w)} ${cancelForm(ctx, w.id, 'Cancel')}</li>`,
        )}</ol>`
      : '';
  const last = session.lastWorkflow;
  const lastPart = last
    ? html`<div id="last-workflow" class="workflow" data-workflow-id="${last.id}" data-status="${last.status}">
<h3>Last workflow</h3><p>${workflowLine(last)}${last.finishedAt ? html` <time datetime="${last.finishedAt}">${last.finishedAt}</time>` : ''}</p>
${last.error ? html`<p class="error">${last.error.code}: ${last.error.message}</p>` : ''}</div>`
    : '';
  return html`<div data-active="${session.hasActiveWorkflows ? 'yes' : 'no'}">
${activePart}
${session.pendingQuestion ? questionForm(ctx, session.pendingQuestion) : ''}
${queue}
${lastPart}</div>`;
}

/** Whether `url` is an http(s) URL: a builder's external link of another scheme is never made a link or a frame. */
function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** `exp://` (or `exps://`) link of a native deployment: its Expo Updates manifest URL (README "Expo builder"). */
function expUrlOf(preview: PreviewUrl): string | null {
  if (preview.platform === 'web' || preview.kind !== 'deployment') return null;
  const match = /^(https?):\/\/(.*)\/deployments\/([0-9a-f-]{36})\/?$/.exec(preview.url);
  if (!match) return null;
  return `${match[1] === 'https' ? 'exps' : 'exp'}://${match[2]}/updates/d/${match[3]}`;
}

/**
 * The previews panel (`#previews`): the latest web preview in a frame from the artifact origin,
 * and each deployment with its QR code (and `exp://` link for iOS and Android).
 * @param sameOrigin true when artifacts are served from the console's own origin: the frame then
 *   gets no `allow-same-origin`, so a preview can never act as the console.
 * @param projectId when given, the web preview also shows its phone screenshot (the picture
 *   `svc_get_session` returns with `screenshot: true`) as the project's thumbnail.
 */
export async function renderPreviews(previewUrls: PreviewUrl[], sameOrigin: boolean, projectId?: string): Promise<SafeHtml> {
  const safe = previewUrls.filter((p) => isHttpUrl(p.url));
  const web = safe.find((p) => p.kind === 'preview' && p.platform === 'web');
  const deployments = safe.filter((p) => p.kind === 'deployment');
  const frame = web
    ? html`<div class="preview"><p><a id="preview-link" href="${web.url}" target="_blank" rel="noopener noreferrer">Open the web preview</a> (built <time datetime="${web.createdAt}">${web.createdAt}</time>)</p>
${projectId ? html`<img id="preview-thumbnail" class="thumbnail" src="/projects/${projectId}/thumbnail.png?v=${web.createdAt}" alt="The web preview on a phone-sized screen" width="195" height="422">` : ''}
<iframe id="preview-frame" title="Web preview" src="${web.url}" sandbox="allow-scripts allow-forms${sameOrigin ? '' : ' allow-same-origin'}" referrerpolicy="no-referrer"></iframe></div>`
    : html`<p class="muted" id="no-preview">No web preview yet: send a build.</p>`;
  const cards = await Promise.all(
    deployments.map(async (d) => {
      const exp = expUrlOf(d);
      const target = exp ?? d.url;
      const svg = await QRCode.toString(target, { type: 'svg', margin: 1, width: 180, errorCorrectionLevel: 'M' });
      return html`<li class="deployment" data-platform="${d.platform}">
<div class="qr" role="img" aria-label="QR code of ${target}">${raw(svg)}</div>
<div><p><strong>${d.platform}</strong> deployment, <time datetime="${d.createdAt}">${d.createdAt}</time></p>
<p><a href="${d.url}" target="_blank" rel="noopener noreferrer">${d.url}</a></p>
${exp ? html`<p>Expo Go: <a class="exp-link" href="${exp}">${exp}</a></p>` : ''}</div></li>`;
    }),
  );
  // A phone cannot open 127.0.0.1 or localhost: those links work only on this machine.
  const loopback = deployments.some((d) => d.platform !== 'web' && isLoopbackUrl(d.url));
  const hint = loopback
    ? html`<p class="hint" id="loopback-hint">These links name this machine's loopback address, which a phone cannot open. To open them on a phone on the same network, start the server with <code>--public-url http://&lt;this machine's LAN address&gt;:PORT</code> (and <code>--host 0.0.0.0</code>).</p>`
    : '';
  return html`${frame}${cards.length > 0 ? html`<h3>Deployments</h3>${hint}<ul id="deployments">${cards}</ul>` : ''}`;
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
}

/** A short key of rendered markup: a page names the key of its session panel, and its stream sends the panel only when it differs. */
export function markupKey(markup: SafeHtml): string {
  return createHash('sha256').update(markup.value).digest('base64url').slice(0, 16);
}

/**
 * A short key that changes when the previews panel would change, so that the frame is not
 * reloaded for nothing: the page names the key it was rendered with, and its stream starts from it.
 */
export function previewsKey(previewUrls: PreviewUrl[]): string {
  return createHash('sha256')
    .update(previewUrls.map((p) => `${p.kind}:${p.platform}:${p.url}`).join('|'))
    .digest('base64url')
    .slice(0, 16);
}

/** Conversation messages as list items of `#messages`. */
export function renderMessages(messages: MessageView[]): SafeHtml {
  return html`${messages.map(
    (m) => html`<li class="message ${m.role}" data-seq="${m.seq}" data-type="${m.type}"><span class="meta">${m.role} · ${m.type} · <time datetime="${m.createdAt}">${m.createdAt}</time></span><div class="content">${m.content}</div></li>`,
  )}`;
}
