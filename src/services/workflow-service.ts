/**
 * The workflow tools' service (docs/contract.md#tools, docs/workflows.md; docs/contract.md#tools): sending
 * instructions and answers, reading the session and the conversation, cancelling.
 * Reads follow `svc_get_project`'s access rule; writes are the owner's alone.
 */
import type { Caller } from '../auth/caller.js';
import type { PlanTable } from '../limits/plans.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import { OpenWaits } from './open-waits.js';
import { SessionCache } from './session-cache.js';
import { StepClock, startHeartbeat } from './wait-heartbeat.js';
import { foldProjectStates, type ProjectState } from './project-state.js';
import type { CancelResult, MessagesPage, SendMessageResult, SessionView, WorkflowView } from './resource-shapes.js';
import { toPendingQuestion, toPreviewUrl, workflowView, workflowViewOf } from './workflow-views.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';
import type { NodeRegistry } from '../workflows/node-registry.js';
import { sendMessage } from './message-sender.js';
import { withQuestionFiles } from './question-files.js';
import { latestPageStart, messagesPage, type PageRequest } from './conversation-pages.js';
import { cancelWorkflow } from './workflow-cancel.js';
import type { SendMessageInput } from './send-record.js';

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


/** How a session wait is followed and ended (see `waitSession`). */
export interface SessionWaitOptions {
  /** Longest wait in ms (0: answer at once). */
  waitMs: number;
  /** Ends the wait early (the client went away); the session is then read and returned. */
  signal?: AbortSignal | undefined;
  /**
   * Called with a one-line description of the followed workflow at the start, at each change
   * seen, and every `heartbeatMs` between them (then with the seconds the step has run).
   */
  onStep?: ((message: string) => void) | undefined;
  /** How often `onStep` hears of a step that does not change, in ms (default `WAIT_HEARTBEAT_MS`). */
  heartbeatMs?: number | undefined;
}

/** The four workflow tools' rules (docs/contract.md#tools). */
export class WorkflowService {
  /** Each user's open session waits, bounded (`open-waits.ts`). */
  private readonly openWaits = new OpenWaits();
  /** The session views last read, per project, while nothing they show has changed (`session-cache.ts`). */
  private readonly sessions = new SessionCache();
  /** Since when each followed workflow is at its step, for the waits' heartbeats (`wait-heartbeat.ts`). */
  private readonly steps = new StepClock();

  constructor(private readonly deps: WorkflowServiceDeps) {}

  /**
   * Answers the pending question of the project's waiting workflow (a message with `questionId`,
   * or with neither `questionId` nor `kind`), or else starts (or queues) a new workflow with the
   * message as its instruction: a message with `kind` and no `questionId` is always a new
   * instruction, queued behind the waiting workflow, whose question stays pending.
   * An answered workflow resumes when this server has a free build slot and its turn comes; until
   * then it stays `waiting_for_input` with its question answered, and the result says `queued`.
   * @throws ServiceError -32004/-32003 (project access, owner only); -32602 when `questionId` does
   *   not name the pending question, or the answer breaks the question's rule (nothing changes and
   *   the question stays pending); -32005 (`data.scope = "queued_workflows"`) for a new workflow
   *   while the owner has their plan's `maxQueuedWorkflows` queued (nothing stored).
   * With `input.requestId`, a repeat of it by the same user within 24 hours answers what the first
   * send answered and records nothing (`send-receipts.ts`).
   */
  send(caller: Caller, input: SendMessageInput): Promise<SendMessageResult> {
    return sendMessage(this.deps, caller, input);
  }

  /**
   * The project's workflow status, pending question and preview URLs. While nothing the session
   * shows has changed since the last read (the store's `rowGeneration()`), that read's view is
   * returned again: frozen and shared, so callers must copy it to change it (`session-cache.ts`).
   * @throws -32004/-32003
   */
  async session(caller: Caller, projectId: string): Promise<SessionView> {
    await this.deps.access.readable(caller, projectId);
    const { store, publicUrl } = this.deps;
    // Taken before the reads: a write made while they run moves it, and their view is never served.
    const generation = store.rowGeneration();
    const base = publicUrl.artifacts();
    const cached = this.sessions.get(projectId, generation, base);
    if (cached) return cached;
    const view = await this.readSession(projectId);
    this.sessions.set(projectId, generation, base, view);
    return view;
  }

  /**
   * `session` when it needs no wait: the cached view of a project the caller may read, while
   * nothing it shows changed; else undefined (`session` then reads, or throws).
   */
  sessionNow(caller: Caller, projectId: string): SessionView | undefined {
    if (!this.deps.access.readableNow(caller, projectId)) return undefined;
    return this.sessions.get(projectId, this.deps.store.rowGeneration(), this.deps.publicUrl.artifacts());
  }

  /** The session read from the store. */
  private async readSession(projectId: string): Promise<SessionView> {
    const { workflows, questions, artifacts } = this.deps.store.repos;
    // Separate statements, which another node's commits may fall between: the queue is read before
    // the active workflow, so a queued workflow claimed meanwhile shows as active (never in neither),
    // and one that started between the two reads is listed once, as active.
    const queuedFirst = await workflows.listQueued(projectId);
    const active = await workflows.findActive(projectId);
    const queued = active ? queuedFirst.filter((w) => w.id !== active.id) : queuedFirst;
    const last = await workflows.latestFinished(projectId);
    const pending = active?.status === 'waiting_for_input' ? await questions.pendingOf(active.id) : undefined;
    const base = this.deps.publicUrl;
    return {
      projectId,
      hasActiveWorkflows: active !== undefined || queued.length > 0,
      activeWorkflow: active ? await this.view(active, base) : null,
      // A queued workflow has never run (no transition leads back to `queued`, workflow-states.ts),
      // so it has published nothing: the queue is its one query, not one more per workflow.
      queuedWorkflows: queued.map((w) => workflowView(w, [])),
      pendingQuestion: pending ? toPendingQuestion(pending) : null,
      previewUrls: (await artifacts.latestPerPlatform(projectId)).map((a) => toPreviewUrl(a, base)),
      lastWorkflow: last ? await this.view(last, base) : null,
      ...(await this.waitingFor(queued[0])),
    };
  }

  /** The session's `waitingFor` when the next queued workflow's builder has no live worker. */
  private async waitingFor(next: WorkflowRow | undefined): Promise<{ waitingFor?: string }> {
    const waiting = next && (await this.deps.nodes?.waitingFor(next));
    return waiting ? { waitingFor: waiting } : {};
  }

  /**
   * The session, after waiting until the workflow it follows changes: the active workflow (else the
   * first queued one) changes status or step, asks a question, or ends; or `waitMs` passes; or
   * `signal` aborts. With nothing active or queued, or with the followed workflow's question
   * already asked and not answered, it answers at once. Wake-ups come from the
   * engine's change notices (no polling); each wake-up re-reads the session.
   * @returns the session with `wait` saying why it returned (when `waitMs` > 0).
   *   A user holds at most `MAX_OPEN_WAITS_PER_USER` open waits: one more ends that user's oldest
   *   (`wait.reason = "superseded"`, `open-waits.ts`).
   * @throws ServiceError -32004/-32003 like `session` (also when access is lost during the wait).
   */
  async waitSession(caller: Caller, projectId: string, options: SessionWaitOptions): Promise<SessionView> {
    const first = await this.session(caller, projectId);
    if (options.waitMs <= 0) return first;
    const followed = first.activeWorkflow ?? first.queuedWorkflows[0];
    if (!followed) return { ...first, wait: { changed: false, reason: 'nothing_active' } };
    // Its question is asked already: nothing changes until it is answered, so waiting would only
    // hold the caller (who is the one to answer, or to relay it) for nothing.
    if (first.pendingQuestion?.workflowId === followed.id) return { ...first, wait: { changed: false, reason: 'question_pending' } };
    const mark = fingerprint(first, followed.id);
    if (options.signal?.aborted) return { ...first, wait: { changed: false, reason: 'client_gone' } };

    return new Promise<SessionView>((resolve, reject) => {
      let done = false;
      let scheduled = false;
      // Counted before the first notice, so a caller that has seen it knows the wait is open.
      const release = this.openWaits.enter(caller.userId, () => end('superseded'));
      options.onStep?.(describeFollowed(first, followed.id));
      this.steps.secondsAt(followed.id, mark);
      // A step that runs long still shows the host the call is alive (`wait-heartbeat.ts`).
      const onStep = options.onStep;
      const stopBeat = onStep
        ? startHeartbeat(() => onStep(`${describeFollowed(first, followed.id)} (this step has run ${this.steps.secondsAt(followed.id, mark)} s)`), options.heartbeatMs)
        : () => undefined;
      // Ends the wait once: its slot, timers, change listener and abort listener are given back.
      const settle = () => {
        done = true;
        release();
        stopBeat();
        clearTimeout(timer);
        unsubscribe();
        options.signal?.removeEventListener('abort', onAbort);
      };
      const end = (reason: 'changed' | 'time_up' | 'client_gone' | 'superseded', view?: SessionView) => {
        if (done) return;
        settle();
        (view ? Promise.resolve(view) : this.session(caller, projectId)).then(
          (seen) => resolve({ ...seen, wait: { changed: reason === 'changed', reason } }),
          reject,
        );
      };
      const check = async () => {
        scheduled = false;
        if (done) return;
        let view: SessionView;
        try {
          view = await this.session(caller, projectId);
        } catch (error) {
          if (done) return;
          settle();
          reject(error);
          return;
        }
        if (done || fingerprint(view, followed.id) === mark) return;
        options.onStep?.(describeFollowed(view, followed.id));
        end('changed', view);
      };
      const onAbort = () => end('client_gone');
      // Notices arrive after the writer's commit; one read per burst of them.
      const unsubscribe = this.deps.changes.subscribe(projectId, () => {
        if (scheduled || done) return;
        scheduled = true;
        setImmediate(() => void check());
      });
      const timer = setTimeout(() => end('time_up'), options.waitMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // A change between the first read and the subscription is caught by reading once more.
      void check();
    });
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
    return cancelWorkflow({ access: this.deps.access, repos: this.deps.store.repos, journal: this.deps.journal, engine: this.deps.engine }, caller, input);
  }

  private view(row: WorkflowRow, base: Pick<PublicUrl, 'artifactBaseOf'>): Promise<WorkflowView> {
    return workflowViewOf(this.deps.store.repos.artifacts, row, base);
  }
}

/** Where the followed workflow stands: equal strings mean nothing a waiting caller cares about changed. */
function fingerprint(view: SessionView, workflowId: string): string {
  const w = findWorkflow(view, workflowId);
  if (!w) return 'gone';
  return JSON.stringify([w.status, w.step.index, w.step.total, w.step.name, view.pendingQuestion?.workflowId === workflowId ? view.pendingQuestion.questionId : null]);
}

function findWorkflow(view: SessionView, workflowId: string): WorkflowView | undefined {
  if (view.activeWorkflow?.id === workflowId) return view.activeWorkflow;
  if (view.lastWorkflow?.id === workflowId) return view.lastWorkflow;
  return view.queuedWorkflows.find((w) => w.id === workflowId);
}

/**
 * One line for a progress notification: the workflow's kind, status and step by name, e.g.
 * `build running: step 2/4 Generating the app screens`.
 */
function describeFollowed(view: SessionView, workflowId: string): string {
  const w = findWorkflow(view, workflowId);
  if (!w) return 'the workflow has ended';
  const step = w.step.index > 0 ? `step ${w.step.index}/${w.step.total} ${w.step.name ?? ''}`.trim() : 'not started';
  if (w.status === 'waiting_for_input') {
    const q = view.pendingQuestion;
    return `${w.kind} waiting for input at ${step}${q ? `: ${q.kind === 'code' ? 'a code question for you' : 'a question for the user'}` : ''}`;
  }
  if (w.status === 'failed') return `${w.kind} failed at ${step}${w.error ? `: ${w.error.code}` : ''}`;
  if (w.status === 'queued') return `${w.kind} queued`;
  return `${w.kind} ${w.status}: ${step}`;
}
