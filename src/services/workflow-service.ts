/**
 * The workflow tools' service (docs/contract.md#tools, docs/workflows.md): sending instructions
 * and answers, reading the session and the conversation, cancelling. Reads follow
 * `svc_get_project`'s access rule; writes are the owner's alone. This class composes the parts,
 * one job per file (docs/architecture.md "The workflow service"): `message-sender.ts`,
 * `session-reader.ts`, `session-wait.ts`, `question-files.ts`, `conversation-pages.ts`,
 * `workflow-cancel.ts`.
 */
import type { Caller } from '../auth/caller.js';
import type { PlanTable } from '../limits/plans.js';
import type { Store } from '../store/store.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import type { NodeRegistry } from '../workflows/node-registry.js';
import { foldProjectStates, type ProjectState } from './project-state.js';
import type { CancelResult, MessagesPage, SendMessageResult, SessionView } from './resource-shapes.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';
import { sendMessage } from './message-sender.js';
import { declineRollback, rollbackTarget } from './release-sends.js';
import type { SendMessageInput } from './send-record.js';
import { SessionReader } from './session-reader.js';
import { SessionWaits, type SessionWaitOptions } from './session-wait.js';
import { withQuestionFiles } from './question-files.js';
import { latestPageStart, messagesPage, type PageRequest } from './conversation-pages.js';
import { cancelWorkflow } from './workflow-cancel.js';

/** What the workflow service needs. */
export interface WorkflowServiceDeps {
  store: Store;
  access: ProjectAccess;
  journal: WorkflowJournal;
  engine: WorkflowEngine;
  publicUrl: PublicUrl;
  /** The plans, for each user's bound on queued workflows. */
  plans: PlanTable;
  /** `<dataDir>/workspaces`: a code question's stored paths are relative to its project's folder there. */
  workspacesDir: string;
  /** Notices of project changes: what wakes a waiting `svc_get_session`. */
  changes: Pick<ProjectChanges, 'subscribe'>;
  /** How long a send waits for another node's check of an answer, in ms (default `REMOTE_CHECK_TIMEOUT_MS`). */
  answerCheckTimeoutMs?: number;
  /**
   * The builder recorded in the workflows sent through this node (only a worker with it claims
   * them); without it none is recorded (any worker claims them).
   */
  builderName?: string;
  /** The nodes serving the store: says when no worker serves a queued workflow's builder (`node-registry.ts`). */
  nodes?: Pick<NodeRegistry, 'waitingFor'>;
}

/**
 * Largest `waitSeconds` `svc_get_session` accepts, in seconds; a wait runs at most
 * `WAIT_CAP_SECONDS` (`wait-heartbeat.ts`) of it.
 */
export const MAX_WAIT_SECONDS = 60;

/** The four workflow tools' rules (docs/contract.md#tools). */
export class WorkflowService {
  /** The session reads and their cache (`session-reader.ts`). */
  private readonly reader: SessionReader;
  /** The open session waits (`session-wait.ts`). */
  private readonly waits: SessionWaits;

  constructor(private readonly deps: WorkflowServiceDeps) {
    this.reader = new SessionReader(deps);
    this.waits = new SessionWaits({
      read: (caller, projectId) => this.reader.session(caller, projectId),
      changes: deps.changes,
    });
  }

  /**
   * Answers the pending question of the project's waiting workflow, or else starts (or queues) a
   * new workflow with the message as its instruction (`sendMessage` in `message-sender.ts`).
   * @throws ServiceError -32004/-32003 (project access, owner only); -32602 for an answer that
   *   does not fit the pending question; -32005 (`data.scope = "queued_workflows"`) past the plan's
   *   `maxQueuedWorkflows`. Nothing is stored when it throws.
   */
  send(caller: Caller, input: SendMessageInput): Promise<SendMessageResult> {
    return sendMessage(this.deps, caller, input);
  }

  /**
   * Checks a rollback's message before the user is asked to confirm it (`rollbackTarget` in
   * `release-sends.ts`). @throws ServiceError -32004/-32003 (owner only); -32602 naming the
   * project's deploy numbers.
   */
  async checkRollback(caller: Caller, input: { projectId: string; message: string }): Promise<void> {
    await this.deps.access.writable(caller, input.projectId);
    await rollbackTarget(this.deps.store.repos.releases, input.projectId, input.message);
  }

  /**
   * Records a rollback the user declined to confirm, as cancelled at once (`declineRollback` in
   * `release-sends.ts`). @throws as `checkRollback`
   */
  declineRollback(caller: Caller, input: { projectId: string; message: string }): Promise<SendMessageResult> {
    return declineRollback(this.deps, caller, input);
  }

  /**
   * The project's workflow status, pending question and preview URLs; a cached view is frozen and
   * shared (`SessionReader.session`). @throws -32004/-32003
   */
  session(caller: Caller, projectId: string): Promise<SessionView> {
    return this.reader.session(caller, projectId);
  }

  /**
   * The session, after waiting (up to `options.waitMs` ms) until the workflow it follows changes,
   * with `wait` saying why it returned (`SessionWaits.wait`). @throws -32004/-32003 like `session`
   */
  waitSession(caller: Caller, projectId: string, options: SessionWaitOptions): Promise<SessionView> {
    return this.waits.wait(caller, projectId, options);
  }

  /**
   * The session with page `page` (1-based) of the app files of the pending code question, its
   * prompt left out (`withQuestionFiles` in `question-files.ts`).
   * @throws ServiceError -32004/-32003 like `session`; -32602 when no code question is waiting,
   *   or `page` is past the last page (`data.pages`).
   */
  async questionFiles(caller: Caller, projectId: string, page: number): Promise<SessionView> {
    const view = await this.session(caller, projectId);
    return withQuestionFiles({ repos: this.deps.store.repos, workspacesDir: this.deps.workspacesDir }, view, page);
  }

  /**
   * The state of each of the caller's own projects (the projects `svc_list_projects` lists), in one
   * read of the store: for the web console's projects list, which would otherwise need one
   * `svc_get_session` per project. Idle projects are absent from the map.
   */
  async ownProjectStates(caller: Caller): Promise<Map<string, ProjectState>> {
    return foldProjectStates(await this.deps.store.repos.workflows.listUnfinishedByOwner(caller.userId));
  }

  /**
   * The `after` that makes `messages` return the latest `limit` messages (`latestPageStart` in
   * `conversation-pages.ts`). @throws -32004/-32003 like `messages`
   */
  latestPageStart(caller: Caller, projectId: string, limit: number): Promise<number> {
    return latestPageStart({ access: this.deps.access, repos: this.deps.store.repos }, caller, { projectId, limit });
  }

  /**
   * A page of the conversation, oldest first; other readers than the owner get the private
   * "latest" update URL hidden (`messagesPage` in `conversation-pages.ts`). @throws -32004/-32003
   */
  messages(caller: Caller, input: PageRequest): Promise<MessagesPage> {
    return messagesPage({ access: this.deps.access, repos: this.deps.store.repos }, caller, input);
  }

  /**
   * Cancels a workflow of the project: the given one, else the active one (`cancelWorkflow` in
   * `workflow-cancel.ts`). @throws ServiceError -32004 (unknown workflow, or none active and none
   * named); -32003 for a project the caller does not own.
   */
  cancel(caller: Caller, input: { projectId: string; workflowId?: string | undefined }): Promise<CancelResult> {
    return cancelWorkflow(
      { access: this.deps.access, repos: this.deps.store.repos, journal: this.deps.journal, engine: this.deps.engine },
      caller,
      input,
    );
  }
}
