/**
 * What every route group of the web console shares (docs/contract.md "Web console"; docs/contract.md#web-console):
 * its deps, the typed tool caller, the live-update hub, the cookie names and the page senders.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/caller.js';
import type { RequestGate } from '../auth/request-gate.js';
import type { WebSessionService } from '../auth/web-sessions.js';
import { isExpectedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createToolCaller, type ToolCaller, type ToolRunner } from '../mcp/tool-caller.js';
import { TOOLS } from '../mcp/tools/index.js';
import type { ProjectState } from '../services/project-state.js';
import type { OwnerEnvironment } from '../services/project-env.js';
import type { PublicUrl } from '../services/public-url.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import type { SafeHtml } from './html.js';
import { contentSecurityPolicy, sendHtml } from './http-util.js';
import { LiveHub, type LiveHubOptions } from './live-updates.js';
import { errorPage } from './pages.js';
import { shown } from './shown-error.js';

/**
 * The session cookie (HttpOnly, SameSite=Strict); under https `__Host-svc_session`, which no other
 * host (an artifact origin under the same domain included) can set, and no path can shadow.
 */
export const SESSION_COOKIE = 'svc_session';
/** Double-submit cookie of the sign-in form, before a session exists (`__Host-` under https too). */
export const SIGNIN_COOKIE = 'svc_signin';

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
  /** A project's environment variables, for its owner alone (docs/console.md; docs/security.md "Project environment"). */
  environment: Pick<OwnerEnvironment, 'list' | 'set' | 'unset'>;
  /** SQLite's `data_version`, to see other processes' changes. */
  onReset(listener: () => void): () => void;
  publicUrl: Pick<PublicUrl, 'get' | 'artifacts' | 'previewFrameSource' | 'origins'>;
  logger: Logger;
  live?: LiveHubOptions;
  /** The client address of a request (behind a trusted proxy, from `X-Forwarded-For`); default the socket's peer. */
  clientAddress?(req: IncomingMessage): string;
}

/** The signed-in person a page is shown to: the header's name, the forms' CSRF token, the MCP URL shown. */
export interface Viewer {
  userName: string;
  csrf: string;
  mcpUrl: string;
}

/** What the console's route groups share. */
export interface ConsoleContext {
  deps: WebConsoleDeps;
  /** The tools, typed (`mcp/tool-caller.ts`). */
  tools: ToolCaller<typeof TOOLS>;
  /** The open event streams of the live pages. */
  hub: LiveHub;
  /** Whether the public URL is https (cookies get `Secure` and the `__Host-` prefix). */
  secure(): boolean;
  /** `<public URL>/mcp`, shown on the pages. */
  mcpUrl(): string;
  /** A cookie's name, `__Host-` prefixed under https. */
  cookieName(name: string): string;
  /**
   * Whether the preview frame would share the console's origin (the shared path form, or artifacts
   * on the console's own origin): it then runs in an opaque origin (no `allow-same-origin`).
   */
  sameOrigin(req: IncomingMessage): boolean;
  /** Sends an HTML page with the console's Content-Security-Policy. */
  page(res: ServerResponse, status: number, body: SafeHtml, headers?: Record<string, string | string[]>): void;
  /** Sends the error page of `error` (its status and `Retry-After`); logs it unless it is an expected error. */
  failurePage(res: ServerResponse, error: unknown, viewer?: { userName: string; csrf: string }): void;
}

/** The context of one console on `deps` (one live-update hub, closed with the console). */
export function consoleContext(deps: WebConsoleDeps): ConsoleContext {
  const secure = () => deps.publicUrl.get().startsWith('https:');
  const csp = () => contentSecurityPolicy(`'self' ${deps.publicUrl.previewFrameSource()}`);
  const page: ConsoleContext['page'] = (res, status, body, headers = {}) => sendHtml(res, status, body, csp(), headers);
  return {
    deps,
    tools: createToolCaller(TOOLS, deps.tools),
    hub: new LiveHub(deps.changes, deps.onReset, deps.logger, deps.live),
    secure,
    mcpUrl: () => `${deps.publicUrl.get()}/mcp`,
    cookieName: (name) => (secure() ? `__Host-${name}` : name),
    sameOrigin: (req) => {
      if (deps.publicUrl.origins === 'shared') return true;
      const origin = new URL(deps.publicUrl.artifacts()).origin;
      return origin === new URL(deps.publicUrl.get()).origin || origin === `http://${req.headers.host ?? ''}`;
    },
    page,
    failurePage: (res, error, viewer) => {
      if (!isExpectedError(error)) deps.logger.error({ err: error }, 'web console request failed');
      const s = shown(error);
      page(
        res,
        s.status,
        errorPage(s.error, viewer),
        s.retryAfter !== undefined ? { 'Retry-After': String(s.retryAfter) } : {},
      );
    },
  };
}
