/**
 * What one project page's event stream pushes (docs/contract.md#web-console): the session panel
 * when it changed, the previews panel when the set of previews changed, and the conversation's new
 * messages (with the last `seq` as the event id, so a reconnecting browser resumes after it).
 * Each push reads through the tools as the signed-in user, so access is checked every time.
 */
import type { WebSession } from '../auth/web-sessions.js';
import { isExpectedError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ToolCaller } from '../mcp/tool-caller.js';
import type { TOOLS } from '../mcp/tools/index.js';
import type { LiveStream } from './live-updates.js';
import { markupKey, previewsKey, renderMessages, renderPreviews, renderSession } from './project-view.js';
import { shown } from './shown-error.js';

/** Messages read per push and page. */
const PUSH_PAGE = 100;

/** What a project stream starts from. */
export interface ProjectStreamOptions {
  userId: string;
  projectId: string;
  /** Send messages after this `seq`; null: send none (the page does not show the end). */
  messagesAfter: number | null;
  /** `markupKey` of the session panel the page shows. */
  sessionKey: string;
  /** `previewsKey` of the previews the page shows. */
  previewsKey: string;
  /** Artifacts share the console's origin (the preview frame gets no `allow-same-origin`). */
  sameOrigin: boolean;
  /** This server's `/mcp`, for the lines that connect an MCP host (a code question's panel). */
  mcpUrl?: string;
  /** The stream's session now, or null once it ended (signed out, expired, token revoked). */
  session(): Promise<WebSession | null>;
  /** The tools the stream reads with (the console's typed caller). */
  tools: Pick<ToolCaller<typeof TOOLS>, 'getSession' | 'getMessages'>;
  /** Where a push that fails for a reason other than the contract's errors is logged. */
  logger: Pick<Logger, 'error'>;
}

/** The stream of one open project page. */
export function projectStream(options: ProjectStreamOptions): LiveStream {
  const { projectId, tools } = options;
  let lastSeq = options.messagesAfter;
  let sessionKey = options.sessionKey;
  let previews = options.previewsKey;
  return {
    userId: options.userId,
    projectId,
    signedIn: async () => (await options.session()) !== null,
    push: async (write) => {
      const current = await options.session();
      if (!current) {
        write('signed-out', { location: '/signin' });
        return false;
      }
      const { caller } = current;
      try {
        const view = await tools.getSession({ projectId }, caller);
        const panel = renderSession({ projectId, csrf: current.csrf, mcpUrl: options.mcpUrl }, view);
        const panelKey = markupKey(panel);
        if (panelKey !== sessionKey) {
          sessionKey = panelKey;
          write('session', { html: panel.value, active: view.hasActiveWorkflows });
        }
        const key = previewsKey(view.previewUrls);
        if (key !== previews) {
          previews = key;
          write('previews', { html: (await renderPreviews(view.previewUrls, options.sameOrigin, projectId)).value });
        }
        while (lastSeq !== null) {
          const page = await tools.getMessages({ projectId, after: lastSeq, limit: PUSH_PAGE }, caller);
          if (page.messages.length > 0) {
            lastSeq = page.nextAfter;
            write('messages', { html: renderMessages(page.messages).value }, String(lastSeq));
          }
          if (!page.hasMore) break;
        }
        return true;
      } catch (error) {
        if (!isExpectedError(error))
          options.logger.error({ err: error, projectId: options.projectId }, 'console event stream push failed');
        write('gone', shown(error).error);
        return false;
      }
    },
  };
}
