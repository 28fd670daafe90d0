/**
 * The live parts of a project page (docs/console.md "Web console"): the session panel (active workflow,
 * queue, pending question, last workflow), the previews panel (web preview frame, deployments
 * with QR codes) and conversation messages. Each is rendered whole on the server, both for the
 * first page and for every Server-Sent Event, so the page works without script.
 */
import { createHash } from 'node:crypto';
import type {
  MessageView,
  PendingQuestion,
  PreviewUrl,
  SessionView,
  WorkflowView,
} from '../services/resource-shapes.js';
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';
import { codeQuestionBox } from './host-guide.js';
import { html, raw, type SafeHtml } from './html.js';
import { timeTag } from './time-tag.js';

/** What the forms of a panel need. */
interface FormContext {
  projectId: string;
  csrf: string;
  /** This server's `/mcp`, for the lines that connect an MCP host (`host-guide.ts`). */
  mcpUrl?: string | undefined;
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

/** A Cancel button for one workflow; `names` says which one to a screen reader (`Cancel build: Add a cart`). */
function cancelForm(ctx: FormContext, workflow: WorkflowView, label: string): SafeHtml {
  return html`<form method="post" action="/projects/${ctx.projectId}/cancel" class="inline">
<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="workflowId" value="${workflow.id}">
<button type="submit" class="danger" data-action="cancel" aria-label="Cancel ${workflow.kind}: ${workflow.title}">${label}</button></form>`;
}

function questionForm(
  ctx: FormContext,
  question: PendingQuestion,
  workflow: WorkflowView | null,
  error: SafeHtml | undefined,
): SafeHtml {
  const hidden = html`<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="questionId" value="${question.questionId}">`;
  // A code question is the MCP host model's to answer: the person is told so (`host-guide.ts`).
  if (question.kind === 'code')
    return codeQuestionBox({
      question,
      workflow,
      mcpUrl: ctx.mcpUrl,
      form: html`<form method="post" action="/projects/${ctx.projectId}/answer">${hidden}`,
      error,
    });
  let input: SafeHtml;
  if (question.options && question.options.length > 0) {
    input = html`<fieldset><legend>Choose one</legend>${question.options.map(
      (option) =>
        html`<label class="option"><input type="radio" name="message" value="${option}" required> ${option}</label>`,
    )}</fieldset>`;
  } else {
    input = html`<label for="answer">Answer</label><input id="answer" name="message" type="text" required${error ? html` autofocus aria-invalid="true" aria-describedby="error"` : ''} maxlength="${MAX_MESSAGE_LENGTH}"${question.pattern ? html` pattern="${question.pattern}" title="Must match ${question.pattern}"` : ''} autocomplete="off">${
      question.pattern ? html`<p class="hint">Must match <code>${question.pattern}</code>.</p>` : ''
    }`;
  }
  return html`<section id="question" class="question" aria-labelledby="question-title">
<h3 id="question-title">The building agent asks</h3>
<p class="prompt">${question.prompt}</p>
<form method="post" action="/projects/${ctx.projectId}/answer">${hidden}${input}${error ?? ''}<button type="submit" data-action="answer">Answer</button></form>
<p class="hint" id="waiting-hint">The agent waits for this answer: a message you send now answers it. To send a new instruction instead, cancel the workflow.</p>
</section>`;
}

function workflowLine(workflow: WorkflowView): SafeHtml {
  return html`<span class="kind">${workflow.kind}</span> ${statusBadge(workflow.status)} <span class="step">${stepText(workflow)}</span>`;
}

/** The instruction's first line, as the workflow's name (`title`, from the tools' answer). */
function workflowTitle(workflow: WorkflowView): SafeHtml {
  return html`<span class="title">“${workflow.title}”</span>`;
}

/**
 * The session panel (`#session`): what runs, what is asked, what waits, what ran last.
 * @param answerError the refusal of an answer just sent, shown under the answer box.
 */
export function renderSession(ctx: FormContext, session: SessionView, answerError?: SafeHtml): SafeHtml {
  const active = session.activeWorkflow;
  const activePart = active
    ? html`<div id="active-workflow" class="workflow" data-workflow-id="${active.id}" data-status="${active.status}">
<p>${workflowLine(active)}</p>
<p class="workflow-title">${workflowTitle(active)}</p>
<progress max="${Math.max(active.step.total, 1)}" value="${active.step.index}">${stepText(active)}</progress>
${active.status === 'cancelling' ? '' : cancelForm(ctx, active, `Cancel this ${active.kind}`)}
</div>`
    : html`<p id="no-active" class="muted">No workflow is running.</p>`;
  const queue =
    session.queuedWorkflows.length > 0
      ? html`<h3>Queue</h3><ol id="queue">${session.queuedWorkflows.map(
          (w) =>
            html`<li data-workflow-id="${w.id}" data-status="${w.status}"><span class="kind">${w.kind}</span> ${workflowTitle(w)} ${cancelForm(ctx, w, 'Cancel')}</li>`,
        )}</ol>`
      : '';
  const last = session.lastWorkflow;
  const lastPart = last
    ? html`<div id="last-workflow" class="workflow" data-workflow-id="${last.id}" data-status="${last.status}">
<h3>Last workflow</h3><p>${workflowLine(last)}${last.finishedAt ? html` <span class="meta">· finished ${timeTag(last.finishedAt)}</span>` : ''}</p>
<p class="workflow-title">${workflowTitle(last)}</p>
${last.error ? html`<p class="error">${last.error.code}: ${last.error.message}</p>` : ''}</div>`
    : '';
  return html`<div data-active="${session.hasActiveWorkflows ? 'yes' : 'no'}">
${activePart}
${session.pendingQuestion ? questionForm(ctx, session.pendingQuestion, active, answerError) : ''}
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

/** `exp://` (or `exps://`) link of a native deployment: its Expo Updates manifest URL (docs/builders.md#expo-updates). */
function expUrlOf(preview: PreviewUrl): string | null {
  if (preview.platform === 'web' || preview.kind !== 'deployment') return null;
  const match = /^(https?):\/\/(.*)\/deployments\/([0-9a-f-]{36})\/?$/.exec(preview.url);
  if (!match) return null;
  return `${match[1] === 'https' ? 'exps' : 'exp'}://${match[2]}/updates/d/${match[3]}`;
}

/** Deploy number of a deployment; a deployment without one (an older store) gets a group of its own. */
function deployKey(d: PreviewUrl): string {
  return d.deployNumber !== null ? String(d.deployNumber) : `${d.platform}:${d.url}`;
}

/**
 * The previews panel (`#previews`): the latest web preview in a frame from the artifact origin,
 * and the latest deployment of each platform with its QR code (and `exp://` link for iOS and
 * Android), grouped by deploy: `Deploy #3: web, ios, android` (one number per deploy,
 * docs/contract.md#tools).
 * @param sameOrigin true when previews must run in an opaque origin (the shared path form of
 *   `--artifact-origins`, or artifacts served from the console's own origin): the frame then gets
 *   no `allow-same-origin`, so a preview can never act as the console or as another project.
 * @param projectId when given, the web preview also shows its phone screenshot (the picture
 *   `svc_get_session` returns with `screenshot: true`) as the project's thumbnail.
 */
export async function renderPreviews(
  previewUrls: PreviewUrl[],
  sameOrigin: boolean,
  projectId?: string,
): Promise<SafeHtml> {
  const safe = previewUrls.filter((p) => isHttpUrl(p.url));
  const web = safe.find((p) => p.kind === 'preview' && p.platform === 'web');
  const deployments = safe.filter((p) => p.kind === 'deployment');
  const frame = web
    ? html`<div class="preview"><p><a id="preview-link" href="${web.url}" target="_blank" rel="noopener noreferrer">Open the web preview</a> (built ${timeTag(web.createdAt)})</p>
${projectId ? html`<img id="preview-thumbnail" class="thumbnail" src="/projects/${projectId}/thumbnail.png?v=${web.createdAt}" alt="The web preview on a phone-sized screen" width="195" height="422">` : ''}
<iframe id="preview-frame" title="Web preview" src="${web.url}" sandbox="allow-scripts allow-forms${sameOrigin ? '' : ' allow-same-origin'}" referrerpolicy="no-referrer"></iframe></div>`
    : html`<p class="muted" id="no-preview">No web preview yet: send a build.</p>`;
  const card = async (d: PreviewUrl) => {
    const exp = expUrlOf(d);
    const target = exp ?? d.url;
    // Loaded on the first deployment card: a start (the stdio one's preview listener serves the console) never evaluates the QR encoder.
    const { default: QRCode } = await import('qrcode');
    const svg = await QRCode.toString(target, { type: 'svg', margin: 1, width: 180, errorCorrectionLevel: 'M' });
    return html`<li class="deployment" data-platform="${d.platform}" data-deploy="${d.deployNumber ?? ''}">
<div class="qr" role="img" aria-label="QR code of ${target}">${raw(svg)}</div>
<div><p><strong>${d.platform}</strong></p>
<p><a href="${d.url}" target="_blank" rel="noopener noreferrer">${d.url}</a></p>
${exp ? html`<p>Expo Go: <a class="exp-link" href="${exp}">${exp}</a></p>` : ''}</div></li>`;
  };
  // Newest deploy first; within a deploy, web, ios, android.
  const order = ['web', 'ios', 'android'];
  const groups = new Map<string, PreviewUrl[]>();
  for (const d of [...deployments].sort(
    (a, b) => (b.deployNumber ?? 0) - (a.deployNumber ?? 0) || order.indexOf(a.platform) - order.indexOf(b.platform),
  )) {
    const key = deployKey(d);
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  const deploys = await Promise.all(
    [...groups.values()].map(async (group) => {
      const first = group[0]!;
      const newest = group.reduce((a, b) => (a.createdAt > b.createdAt ? a : b));
      const name = first.deployNumber !== null ? `Deploy #${first.deployNumber}` : 'Deploy';
      return html`<li class="deploy" data-deploy="${first.deployNumber ?? ''}"><h4>${name}: ${group.map((d) => d.platform).join(', ')} <span class="meta">${timeTag(newest.createdAt)}</span></h4>
<ul class="deployments">${await Promise.all(group.map(card))}</ul></li>`;
    }),
  );
  // A phone cannot open 127.0.0.1 or localhost: those links work only on this machine.
  const loopback = deployments.some((d) => d.platform !== 'web' && isLoopbackUrl(d.url));
  const hint = loopback
    ? html`<p class="hint" id="loopback-hint">These links name this machine's loopback address, which a phone cannot open. To open them on a phone on the same network, start the server with <code>--public-url http://&lt;this machine's LAN address&gt;:PORT</code> (and <code>--host 0.0.0.0</code>).</p>`
    : '';
  return html`${frame}${deploys.length > 0 ? html`<h3>Deployments</h3>${hint}<ul id="deployments">${deploys}</ul>` : ''}`;
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  // Any 127.0.0.0/8 address is this machine too.
  return isLoopbackHostname(host) || host.startsWith('127.');
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
    .update(previewUrls.map((p) => `${p.kind}:${p.platform}:${p.url}:${p.deployNumber}`).join('|'))
    .digest('base64url')
    .slice(0, 16);
}

/** One message as a line of the conversation. */
function messageLine(m: MessageView): SafeHtml {
  return html`<li class="message ${m.role}" data-seq="${m.seq}" data-type="${m.type}"><span class="meta">${m.role} · ${m.type} · ${timeTag(m.createdAt)}</span><div class="content">${m.content}</div></li>`;
}

/** The first line of `text`, for a folded entry's summary (CSS cuts it to the width). */
function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? ''
  );
}

/**
 * The conversation (`#messages`) as entries, newest first: the messages of one workflow fold into
 * one entry (`<details>`, closed) whose summary shows the workflow's instruction, its outcome
 * (its last result or error, else its latest message) and how many lines it holds, and which opens on a click (without script too);
 * a message of no workflow is an entry of its own. Within an entry, lines are oldest first.
 *
 * The same markup carries live updates: the event stream sends the entries of new messages, and
 * the page's script merges an entry whose `id` it already shows (`wf-<workflowId>`) into it.
 * @param messages a page of `svc_get_messages`, oldest first.
 */
export function renderMessages(messages: MessageView[]): SafeHtml {
  const groups = new Map<string, MessageView[]>();
  for (const m of messages) {
    const key = m.workflowId ?? `m${m.seq}`;
    const group = groups.get(key);
    if (group) group.push(m);
    else groups.set(key, [m]);
  }
  const entries = [...groups.values()].sort((a, b) => b[b.length - 1]!.seq - a[a.length - 1]!.seq);
  return html`${entries.map((group) => {
    const first = group[0]!;
    const latest = group[group.length - 1]!;
    if (first.workflowId === null) {
      return html`<li class="entry single ${first.role}" data-seq="${first.seq}" data-type="${first.type}"><span class="meta">${first.role} · ${timeTag(first.createdAt)}</span><div class="content">${first.content}</div></li>`;
    }
    const instruction = group.find((m) => m.type === 'instruction');
    // What the workflow came to (its result or error) says more than the status line after it.
    const outcome = [...group].reverse().find((m) => m.type === 'result' || m.type === 'error') ?? latest;
    const title = instruction ? firstLine(instruction.content) : 'Earlier messages of this workflow';
    return html`<li class="entry" id="wf-${first.workflowId}" data-workflow-id="${first.workflowId}" data-last-seq="${latest.seq}"><details><summary>
<span class="entry-head"><span class="entry-title" data-known="${instruction ? 'yes' : 'no'}">${title}</span> <span class="meta entry-time">${timeTag(latest.createdAt)}</span></span>
<span class="entry-latest" data-type="${outcome.type}">${firstLine(outcome.content)}</span>
<span class="meta entry-count" data-count="${group.length}">${group.length} ${group.length === 1 ? 'message' : 'messages'}</span></summary>
<ol class="lines">${group.map(messageLine)}</ol></details></li>`;
  })}`;
}
