// The session card of the MCP Apps extension (docs/contract.md#app-card): one project's active
// workflow (followed), latest screenshot, deployments with QR codes, pending question, and
// build, deploy and cancel buttons. Talks only to its host, through the extension's App bridge:
// every read and action is a tool call the host forwards to this server. Bundled into one HTML
// file by scripts/build-card.mjs.
import { App } from '@modelcontextprotocol/ext-apps';

/** The `_meta` key of the deployments' QR codes (SVG by URL) in the server's svc_get_session results (src/mcp/card-qr.ts). */
const QR_META_KEY = 'io.github.mobile-builder-mcp/deploymentQrCodes';

const app = new App({ name: 'mobile-builder-card', version: '1.0.0' }, {});
const $ = (id) => document.getElementById(id);
/** The session shown, its deployments' QR codes, the web preview its screenshot shows, and whether a wait is open. */
const state = { session: null, qr: {}, shotOf: null, following: false, named: null };

/** Takes `result`'s session (a svc_get_session result) and the QR codes that came with it. */
function take(result) {
  state.session = result.structuredContent;
  state.qr = (result._meta && result._meta[QR_META_KEY]) || {};
}

/** Calls a tool through the host; a refusal shows in the card and resolves to null. */
async function call(name, args) {
  try {
    const result = await app.callServerTool({ name, arguments: args });
    $('error').textContent = result.isError ? JSON.stringify(result.content) : '';
    return result.isError ? null : result;
  } catch (error) {
    $('error').textContent = error instanceof Error ? error.message : String(error);
    return null;
  }
}

/** Shows one svc_get_session result, then fetches what it lacks (name, screenshot) and follows it. */
function show(result) {
  const session = result && result.structuredContent;
  if (!session || typeof session.projectId !== 'string') return;
  take(result);
  render(session);
  picture(result);
  void name(session.projectId);
  void screenshot(session);
  void follow();
}

/** Shows the image of a svc_get_session `result` (null: none), if it has one; returns whether it had. */
function picture(result) {
  const image = result && (result.content || []).find((c) => c.type === 'image');
  if (image) {
    $('shot').src = `data:${image.mimeType};base64,${image.data}`;
    $('shot').hidden = false;
  }
  return !!image;
}

async function name(projectId) {
  if (state.named === projectId) return;
  state.named = projectId;
  const project = await call('svc_get_project', { projectId });
  if (project) $('name').textContent = project.structuredContent.name;
}

/** The newest web preview (else deployment), whose screenshot the card shows. */
function webPreview(session) {
  const web = session.previewUrls.filter((p) => p.platform === 'web');
  return web.find((p) => p.kind === 'preview') || web[0];
}

/**
 * Shows the screenshot of the newest web preview, or why there is none. A "busy" answer (the
 * user's one browser is taken, docs/hosts.md "Screenshots") is asked again after 3, 6, 12, 24 and
 * 48 s: past the 90 s a screenshot call may hold a browser, and not once a newer preview is shown.
 * A failure of the preview itself (which the server remembers) is shown, not asked again.
 */
async function screenshot(session) {
  const preview = webPreview(session);
  if (!preview || state.shotOf === preview.url) return;
  state.shotOf = preview.url;
  for (let delay = 3000; ; delay *= 2) {
    // Only the picture is taken from this answer: it may come back after a newer session was shown
    // (a screenshot takes seconds), and showing its session would bring back an answered question.
    const result = await call('svc_get_session', { projectId: session.projectId, screenshot: true });
    const shot = result && result.structuredContent.screenshot;
    if (!shot || !shot.busy || delay > 48000) {
      $('shot-note').textContent = picture(result) || !shot ? '' : shot.reason;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (state.shotOf !== preview.url) return;
  }
}

/** Waits on the active workflow, one svc_get_session wait after another, until nothing is active. */
async function follow() {
  if (state.following) return;
  state.following = true;
  try {
    while (state.session && state.session.hasActiveWorkflows && !state.session.pendingQuestion) {
      const result = await call('svc_get_session', { projectId: state.session.projectId, waitSeconds: 30 });
      if (!result) break;
      take(result);
      render(state.session);
    }
  } finally {
    state.following = false;
  }
  if (state.session) void screenshot(state.session);
}

function render(session) {
  const active = session.activeWorkflow;
  const shown = active || session.lastWorkflow;
  $('status').textContent = shown ? shown.status : 'idle';
  $('status').className = `badge ${shown ? shown.status : 'idle'}`;
  $('step').textContent = shown
    ? `${shown.kind} · ${shown.title}${active ? ` · step ${shown.step.index}/${shown.step.total}: ${shown.step.name}` : ''}`
    : 'No workflow yet';
  $('queued').textContent = session.queuedWorkflows.length ? `${session.queuedWorkflows.length} queued` : '';
  $('cancel').disabled = !active;
  renderDeployments(session);
  renderQuestion(session.pendingQuestion);
}

function renderDeployments(session) {
  const list = $('deploys');
  list.replaceChildren();
  for (const p of session.previewUrls.filter((u) => u.kind === 'deployment')) {
    const item = document.createElement('figure');
    // The server's drawing (none for a URL too long for a QR code: the link below still opens it).
    if (state.qr[p.url]) item.insertAdjacentHTML('afterbegin', state.qr[p.url]);
    const caption = document.createElement('figcaption');
    const link = document.createElement('a');
    link.href = p.url;
    link.textContent = `${p.platform} deploy #${p.deployNumber}`;
    link.addEventListener('click', (event) => {
      event.preventDefault();
      void app.openLink({ url: p.url });
    });
    caption.append(link);
    item.append(caption);
    list.append(item);
  }
}

function renderQuestion(question) {
  $('question').hidden = !question;
  if (!question) return;
  $('prompt').textContent =
    question.kind === 'code'
      ? 'The building agent asks your MCP host for code: ask the assistant to answer it.'
      : question.prompt;
  $('answer-form').hidden = question.kind === 'code';
  $('answer').placeholder = question.options ? question.options.join(' / ') : 'Your answer';
}

/** Sends `message` (an answer to the pending question, or an instruction of `kind`), then follows. */
async function send(args) {
  const session = state.session;
  if (!session) return;
  if (await call('svc_send_message', { projectId: session.projectId, ...args })) await refresh();
}

async function refresh() {
  if (state.session) show(await call('svc_get_session', { projectId: state.session.projectId }));
}

$('build').addEventListener('click', () => {
  const message = $('instruction').value.trim();
  if (!message) return void $('instruction').focus();
  $('instruction').value = '';
  void send({ kind: 'build', message });
});
$('deploy').addEventListener('click', () => void send({ kind: 'deploy', message: 'Deploy the app' }));
$('cancel').addEventListener('click', async () => {
  if (state.session && (await call('svc_cancel_workflow', { projectId: state.session.projectId }))) await refresh();
});
// No <form>: hosts sandbox the card, and a sandbox without allow-forms drops form submission.
function answer() {
  const question = state.session && state.session.pendingQuestion;
  const message = $('answer').value.trim();
  if (!question || !message) return;
  $('answer').value = '';
  void send({ questionId: question.questionId, message });
}
$('answer-send').addEventListener('click', answer);
$('answer').addEventListener('keydown', (event) => {
  if (event.key === 'Enter') answer();
});

app.ontoolresult = (result) => show(result);
void app.connect();
