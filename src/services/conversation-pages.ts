/**
 * Pages of a project's conversation (`svc_get_messages`, docs/contract.md#tools): messages oldest
 * first after a `seq`, and for the web console the `after` that opens the conversation at its end.
 */
import type { Caller } from '../auth/caller.js';
import type { Repos } from '../store/repos.js';
import type { ProjectAccess } from './project-access.js';
import { MESSAGES_PAGE_DEFAULT, type MessagesPage } from './resource-shapes.js';
import { toMessageView } from './workflow-views.js';

/** What the pages need: the read access rule and the message rows. */
export interface ConversationDeps {
  access: Pick<ProjectAccess, 'readable'>;
  repos: Pick<Repos, 'messages'>;
}

/** Which page: the messages after `seq` `after` (default 0), at most `limit` of them (default `MESSAGES_PAGE_DEFAULT`). */
export interface PageRequest {
  projectId: string;
  after?: number | undefined;
  limit?: number | undefined;
}

/**
 * A page of the conversation, oldest first. A reader who is not the project's owner (a public
 * project) gets the project's private "latest" update URL hidden (docs/builders.md "Expo updates").
 * @throws -32004/-32003
 */
export async function messagesPage(deps: ConversationDeps, caller: Caller, input: PageRequest): Promise<MessagesPage> {
  const project = await deps.access.readable(caller, input.projectId);
  const owner = project.ownerId === caller.userId;
  const after = input.after ?? 0;
  const limit = input.limit ?? MESSAGES_PAGE_DEFAULT;
  const rows = await deps.repos.messages.list(input.projectId, after, limit + 1);
  const page = rows.slice(0, limit);
  return {
    messages: page.map((row) => toMessageView(row, owner)),
    hasMore: rows.length > limit,
    nextAfter: page.length > 0 ? page[page.length - 1]!.seq : after,
  };
}

/**
 * The `after` that makes `messagesPage` return the latest `limit` messages: `seq` grows by one per
 * project, so that is the newest `seq` minus `limit` (at least 0). For the web console, which
 * opens a conversation at its end. @throws -32004/-32003 like `messagesPage`
 */
export async function latestPageStart(
  deps: ConversationDeps,
  caller: Caller,
  input: { projectId: string; limit: number },
): Promise<number> {
  await deps.access.readable(caller, input.projectId);
  return Math.max(0, (await deps.repos.messages.lastSeq(input.projectId)) - input.limit);
}
