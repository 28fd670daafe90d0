/** `svc_get_session` (docs/workflows.md, docs/contract.md#tools). */
import { z } from 'zod';
import { defineTool, withContent, type ContentItem } from '../define-tool.js';
import { askPerson } from './ask-person.js';
import { errorGuide } from './error-guide.js';
import { uuidParameter } from '../parameters.js';
import { sessionSchema, type SessionView } from '../../services/resource-shapes.js';
import { MAX_WAIT_SECONDS } from '../../services/workflow-service.js';
import { MAX_OPEN_WAITS_PER_USER } from '../../services/open-waits.js';
import { SCREENSHOT_LONGEST_MS } from '../../services/preview-screenshots.js';
import { WAIT_CAP_SECONDS, WAIT_HEARTBEAT_MS } from '../../services/wait-heartbeat.js';

/** Reports a project's workflows, pending question and preview URLs; waits for a change and shows the app when asked. */
export const getSessionTool = defineTool({
  name: 'svc_get_session',
  title: 'Get the build session of a project',
  description: [
    "Reports the project's workflows: the active one (running, waiting_for_input or cancelling) with its current step, the queued ones in start order, the last finished one with its error if it failed, the agent's pendingQuestion if it waits for an answer, and the project's latest preview and deployment URLs (also as resource_link items of content). Each workflow has a title (its instruction's first line: tell the user which queued workflow is which by it); each deployment a deployNumber, shared by the platforms one deploy published (say: deploy #3: web, ios, android).",
    `Follow a build by WAITING, not by polling: pass waitSeconds (30 to ${WAIT_CAP_SECONDS} is best) and the call returns as soon as the active workflow changes status or step, asks a question or ends (wait.reason "changed"), or when the time is up ("time_up"); with nothing active it returns at once, and so it does while a question waits for its answer ("question_pending": answer it first). A wait never runs past ${WAIT_CAP_SECONDS} s, so that hosts do not cut it: a larger waitSeconds (up to ${MAX_WAIT_SECONDS}) is answered at ${WAIT_CAP_SECONDS} s with wait.cappedAtSeconds ${WAIT_CAP_SECONDS}. You keep at most ${MAX_OPEN_WAITS_PER_USER} waits open at once: one more ends your oldest (wait.reason "superseded"), so wait on one call per project. Call it again with waitSeconds after each answer until hasActiveWorkflows is false. Hosts that send a progressToken get a progress notification at each step change and at least every ${WAIT_HEARTBEAT_MS / 1000} s (naming the step and how long it has run).`,
    'After a build completes, call it once with screenshot: true to SEE the app: content then holds an image/png of the latest web preview rendered on a phone-sized screen (390x844). Look at it before telling the user what was built; if screenshot.status is "unavailable", screenshot.reason says why (say so, and give the preview URL).',
    'When pendingQuestion is set, answer it with svc_send_message (message = the answer, questionId = pendingQuestion.questionId). pendingQuestion.kind "text" is for the user (relay it, send their answer; when your client declared elicitation, a wait that finds it asks the user itself and says so in elicitation: answered true means it is sent, false that it is still pending); kind "code" is for you: its prompt is a coding task on the app, and you answer with the JSON files described in pendingQuestion.format (see svc_send_message). A big app\'s files do not all fit in the prompt: it lists the others by page; read each page with questionFilesPage: N (the answer\'s questionFiles.files) before you answer.',
    'Readable by the owner, and by anyone for a public project.',
    errorGuide([
      `-32602: projectId is missing or not a UUID, or waitSeconds is not an integer from 0 to ${MAX_WAIT_SECONDS}, or questionFilesPage is past the last page (error.data.pages) or no code question is waiting. Take ids from svc_list_projects.`,
      '-32004 (error.data.resource "project", reason "unknown id"): no project has this id. Check the id with svc_list_projects.',
      "-32003: the project is another user's private project. You cannot read it; do not retry.",
      `-32001 with the message "Request timed out" comes from your MCP client, not from this server: its own timeout ended the call before the wait did (it is not a token problem). Call again with a shorter waitSeconds (30 to ${WAIT_CAP_SECONDS}).`,
    ]),
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    waitSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(0)
      .describe(
        `Wait up to this many seconds (0..${MAX_WAIT_SECONDS}, default 0; 30 to ${WAIT_CAP_SECONDS} is best, a wait never runs past ${WAIT_CAP_SECONDS}) for the active workflow to change status or step, ask a question or end; returns at once with nothing active or a question waiting`,
      ),
    screenshot: z
      .boolean()
      .default(false)
      .describe(
        'Also return an image/png of the latest web preview on a phone-sized screen (ask after a build completes)',
      ),
    questionFilesPage: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "A page of the app's files for the pending code question (its prompt says how many pages there are); the answer's questionFiles holds them",
      ),
  }),
  output: sessionSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // A poll that neither waits nor asks for a picture or a page: the session's rows are covered by the
  // store's row generation (a wait, a screenshot and a page of files are not kept).
  memo: (args) => !args.waitSeconds && !args.screenshot && args.questionFilesPage === undefined,
  handle: async ({ projectId, waitSeconds, screenshot, questionFilesPage }, { caller, services, request }) => {
    // A screenshot may wait for a browser, then render: never cut by the per-message deadline.
    const waited = Math.min(waitSeconds, WAIT_CAP_SECONDS);
    const longest = waited * 1000 + (screenshot ? SCREENSHOT_LONGEST_MS : 0);
    if (longest > 0) request?.extendDeadline?.(longest);
    if (questionFilesPage !== undefined) return services.workflows.questionFiles(caller, projectId, questionFilesPage);
    // The request's disconnect signal is made on first use: a read that does not wait never needs it.
    const seen = await services.workflows.waitSession(caller, projectId, {
      waitMs: waited * 1000,
      ...(waitSeconds > 0 && { signal: request?.signal, onStep: request?.progress }),
    });
    const capped =
      waited < waitSeconds && seen.wait ? { ...seen, wait: { ...seen.wait, cappedAtSeconds: WAIT_CAP_SECONDS } } : seen;
    // A wait that finds a text question asks the person, when the client can (docs/contract.md#elicitation).
    const session =
      waitSeconds > 0 && request?.elicitation ? await askPerson(capped, request.elicitation, caller, services) : capped;
    if (!screenshot) return replyOf(session);
    const shot = await services.screenshots.latest(caller, projectId);
    const content = previewLinks(session);
    if (shot.png) content.push({ type: 'image', data: shot.png.toString('base64'), mimeType: 'image/png' });
    return withContent({ ...session, screenshot: shot.info }, content);
  },
});

/**
 * The reply of each cached session view (a frozen one, shared while nothing it shows changed:
 * `services/session-cache.ts`), so that a polled session's JSON is made once, not once per call.
 */
const replies = new WeakMap<SessionView, SessionView>();

/** The tool's output for `session`, with its preview links as content. */
function replyOf(session: SessionView): SessionView {
  if (!Object.isFrozen(session)) return withContent(session, previewLinks(session));
  let reply = replies.get(session);
  if (!reply) {
    // Shared by every call while the view is cached: frozen like the view.
    reply = withContent(
      session,
      previewLinks(session).map((link) => Object.freeze(link)),
    );
    replies.set(session, reply);
  }
  return reply;
}

/** The session's preview and deployment URLs as `resource_link` content items. */
function previewLinks(session: SessionView): ContentItem[] {
  return session.previewUrls.map((p) => ({
    type: 'resource_link',
    uri: p.url,
    name: `${p.platform}-${p.kind}`,
    title: `${p.platform === 'web' ? 'Web' : p.platform === 'ios' ? 'iOS' : 'Android'} ${p.kind}`,
    ...(p.platform === 'web' && { mimeType: 'text/html' }),
  }));
}
