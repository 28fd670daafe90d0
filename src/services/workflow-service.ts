/**
 * The workflow tools' service (docs/contract.md#tools, docs/workflows.md; docs/contract.md#tools): sending
 * instructions and answers, reading the session and the conversation, cancelling.
 * Reads follow `svc_get_project`'s access rule; writes are the owner's alone.
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { invalidParameter, notFound, rateLimited } from '../errors.js';
import { limitsFor, workflowBounds, type PlanTable } from '../limits/plans.js';
import type { Repos } from '../store/repos.js';
import type { QuestionRow, WorkflowRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import { checkAnswer, normaliseAnswer } from '../workflows/answer-rules.js';
import { join } from 'node:path';
import type { EngineStarts, WorkflowEngine } from '../workflows/workflow-engine.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import type { PagedFile } from '../builders/builder-module.js';
import { questionKind } from '../builders/builder-registry.js';
import { kindLabel, type WorkflowJournal } from '../workflows/workflow-journal.js';
import { MAX_MESSAGE_LENGTH } from '../config/message-limits.js';
import { isTerminal, statusesBefore } from '../workflows/workflow-states.js';
import { inferKind } from './instruction-kind.js';
import { OpenWaits } from './open-waits.js';
import { SessionCache } from './session-cache.js';
import { StepClock, startHeartbeat } from './wait-heartbeat.js';
import { foldProjectStates, type ProjectState } from './project-state.js';
import { MESSAGES_PAGE_DEFAULT, type CancelResult, type MessagesPage, type SendMessageResult, type SessionView, type WorkflowView } from './resource-shapes.js';
import { toMessageView, toPendingQuestion, toPreviewUrl, workflowView, workflowViewOf } from './workflow-views.js';
import { answerRule, longerThan, tooLong } from './answer-refusals.js';
import { checkByKind, checkMovedQuestion } from './answer-verdicts.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';
import type { NodeRegistry } from '../workflows/node-registry.js';
import { earlierAnswer, finalAnswer, keepAnswer, lockAndFindAnswer } from './send-receipts.js';

/** What a workflow does. */
type WorkflowKind = 'build' | 'deploy';

/** Validated `svc_send_message` arguments. */
export interface SendMessageInput {
  projectId: string;
  message: string;
  kind?: WorkflowKind | undefined;
  questionId?: string | undefined;
  /** The client's id of this send: a repeat within 24 hours answers what the first answered (`send-receipts.ts`). */
  requestId?: string | undefined;
}

/** What the send's transaction decided: the answer, and `unclaimed` when another node has to start the workflow. */
interface SendOutcome {
  result: SendMessageResult;
  unclaimed?: 'queued' | 'waiting_for_input';
}

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
  async send(caller: Caller, input: SendMessageInput): Promise<SendMessageResult> {
    const { access, engine, store } = this.deps;
    await access.writable(caller, input.projectId);
    // A repeat of an earlier send's `requestId` answers what it answered (send-receipts.ts).
    const receipt = input.requestId === undefined ? undefined : { userId: caller.userId, requestId: input.requestId, now: Date.now() + store.clockOffsetMs() };
    const earlier = receipt && (await earlierAnswer(store.repos, receipt));
    if (earlier) return earlier;
    // An answer to a builder's kind of question (a code answer: syntax trees, the workspace on disk)
    // is checked before the transaction starts.
    const pending = answersPending(input) ? await this.pendingOf(store.repos, input.projectId) : undefined;
    const checked = pending && questionKind(pending.kind) && (input.questionId ?? pending.id) === pending.id ? await checkByKind(this.deps, pending, input.message) : undefined;
    // One transaction records the message, lets the engine claim a free slot (so that the answer
    // is exact: `running`, or the queue position), and reports why it waits. On a node that
    // claims nothing, a workflow that only waits for a slot is reported after the commit, once a
    // worker had the chance to claim it (`settleUnclaimed`).
    let starts: EngineStarts | undefined;
    let outcome: SendOutcome;
    try {
      outcome = await store.transaction(async (tx) => {
        // A deadlock runs this again (PostgreSQL): the claims of the attempt rolled back are given back.
        starts?.abandon();
        starts = undefined;
        // Every send to the project, through any node, in one order: FIFO and the one-active rule.
        await tx.lock('projects', input.projectId);
        const repeated = receipt && (await lockAndFindAnswer(tx, receipt));
        if (repeated) return { result: repeated };
        const recorded = await this.record(tx, caller, input, checked);
        starts = await engine.offer(tx);
        const reported = await this.reportSent(tx, caller, input.projectId, recorded, starts);
        if (receipt) await keepAnswer(tx, receipt, reported.result);
        return reported;
      });
    } catch (error) {
      starts?.abandon();
      throw error;
    }
    starts?.launch();
    if (!outcome.unclaimed) return outcome.result;
    const settled = await this.settleUnclaimed(caller, input.projectId, outcome.result, outcome.unclaimed);
    if (receipt) await finalAnswer(store.repos, receipt, { first: outcome.result, final: settled });
    return settled;
  }

  /** Inside the send's transaction, after the record and the engine's offer: the answer, and whether another node has to start it. */
  private async reportSent(tx: Tx, caller: Caller, projectId: string, recorded: { result: SendMessageResult; answered: boolean }, starts: EngineStarts): Promise<SendOutcome> {
    const { engine } = this.deps;
    const { workflowId } = recorded.result;
    if (recorded.answered) {
      // The runner holding the workflow resumes it (on any node: the `workflow` notice), or,
      // when nobody holds it, whichever engine has a slot claims it (the `queued` notice).
      const row = await tx.workflows.findById(workflowId);
      tx.publish({ kind: 'workflow', id: workflowId });
      const status = starts.started(workflowId) ? 'running' : row?.status;
      if (status !== 'waiting_for_input') return { result: recorded.result };
      if (row?.runnerId === null) tx.publish({ kind: 'queued', id: projectId });
      // Another node holds it (or this one claims nothing): its runner resumes it on the notice.
      const heldElsewhere = row?.runnerId != null && row.runnerId !== engine.runnerId;
      if (!engine.claims || heldElsewhere) return { result: recorded.result, unclaimed: 'waiting_for_input' };
      return { result: await this.reportAnsweredWaiting(tx, caller, recorded.result) };
    }
    // The service only records the request; the engine owns the claim.
    if (starts.started(workflowId)) return { result: { ...recorded.result, status: 'running' } };
    // Claimable by another node's engine.
    tx.publish({ kind: 'queued', id: projectId });
    if (!engine.claims && !(await this.waitsForProject(tx, workflowId, projectId))) return { result: recorded.result, unclaimed: 'queued' };
    return { result: await this.reportQueued(tx, caller, recorded.result) };
  }

  /** Whether queued workflow `workflowId` waits for other workflows of its project (not only for a slot). */
  private async waitsForProject(tx: Tx, workflowId: string, projectId: string): Promise<boolean> {
    const queued = await tx.workflows.listQueued(projectId);
    return queued[0]?.id !== workflowId || (await tx.workflows.findActive(projectId)) !== undefined;
  }

  /**
   * After the send's commit, for a workflow another node has to start (this node claims nothing,
   * or another node holds the answered workflow): waits (up to the engine's claim wait) for a
   * worker to claim the new workflow or resume the answered one, and answers `running` when one
   * did; else reports it as waiting for a slot, with its status message, as the claiming node
   * would have.
   */
  private async settleUnclaimed(caller: Caller, projectId: string, result: SendMessageResult, from: 'queued' | 'waiting_for_input'): Promise<SendMessageResult> {
    const { engine, store } = this.deps;
    const row = await engine.awaitClaim({ id: result.workflowId, projectId }, from);
    if (row?.status !== from) return { ...result, status: 'running' };
    return store.transaction(async (tx) => {
      await tx.lock('projects', projectId);
      return from === 'queued' ? this.reportQueued(tx, caller, result) : this.reportAnsweredWaiting(tx, caller, result);
    });
  }

  /** The unanswered question of the project's waiting workflow, if any. */
  private async pendingOf(repos: Repos, projectId: string): Promise<QuestionRow | undefined> {
    const active = await repos.workflows.findActive(projectId);
    return active?.status === 'waiting_for_input' ? repos.questions.pendingOf(active.id) : undefined;
  }

  /** Stores the answer, or the new workflow as `queued` with its instruction message. */
  private async record(tx: Tx, caller: Caller, input: SendMessageInput, checked: { questionId: string; content: string } | undefined): Promise<{ result: SendMessageResult; answered: boolean }> {
    const { journal } = this.deps;
    const { workflows, questions } = tx;
    const active = await workflows.findActive(input.projectId);
    const pending = answersPending(input) && active?.status === 'waiting_for_input' ? await questions.pendingOf(active.id) : undefined;

    if (active && pending) {
      if (input.questionId !== undefined && input.questionId !== pending.id) {
        throw invalidParameter('questionId', 'does not match the pending question', { pendingQuestionId: pending.id });
      }
      let content = input.message;
      if (questionKind(pending.kind)) {
        content = (checked?.questionId === pending.id ? checked : checkMovedQuestion(this.deps.workspacesDir, pending, input.message)).content;
      } else {
        if (longerThan(input.message, MAX_MESSAGE_LENGTH)) throw tooLong(MAX_MESSAGE_LENGTH);
        const problem = checkAnswer(pending, input.message);
        if (problem) throw invalidParameter('message', problem, answerRule(pending));
      }
      await questions.answer(pending.id, normaliseAnswer(input.message), journal.now());
      const message = await journal.post(input.projectId, active.id, { role: 'user', type: 'answer', content }, tx);
      return { result: { messageId: message.id, workflowId: active.id, kind: active.kind, status: 'running' }, answered: true };
    }
    if (input.questionId !== undefined) {
      throw invalidParameter('questionId', 'does not match a pending question: no question is waiting for an answer');
    }
    if (longerThan(input.message, MAX_MESSAGE_LENGTH)) throw tooLong(MAX_MESSAGE_LENGTH);
    // Counted in the write transaction of the insert: concurrent sends cannot pass the bound.
    const { maxQueued } = workflowBounds(limitsFor(this.deps.plans, caller.plan));
    if ((await workflows.countQueuedByOwner(caller.userId)) >= maxQueued) {
      throw rateLimited({
        scope: 'queued_workflows',
        limit: maxQueued,
        plan: caller.plan,
        hint: 'You have the most queued workflows your plan allows. Wait until some of them start (svc_get_session), or cancel some with svc_cancel_workflow.',
      });
    }

    const kind = input.kind ?? inferKind(input.message);
    const row: WorkflowRow = {
      id: randomUUID(),
      projectId: input.projectId,
      seq: await workflows.nextSeq(),
      kind,
      status: 'queued',
      instruction: input.message,
      stepIndex: 0,
      stepTotal: 0,
      stepName: null,
      runnerId: null,
      leaseExpiresAt: null,
      builder: this.deps.builderName ?? null,
      errorCode: null,
      errorMessage: null,
      createdAt: journal.now(),
      startedAt: null,
      finishedAt: null,
    };
    await workflows.insert(row);
    const message = await journal.post(input.projectId, row.id, { role: 'user', type: 'instruction', content: input.message }, tx);
    return { result: { messageId: message.id, workflowId: row.id, kind, status: 'queued' }, answered: false };
  }

  /**
   * The answer for a workflow this engine could not start: `running` when another engine claimed
   * it meanwhile, else `queued` with its position and a status message saying why it waits.
   */
  private async reportQueued(tx: Tx, caller: Caller, result: SendMessageResult): Promise<SendMessageResult> {
    const { journal } = this.deps;
    const { workflows } = tx;
    const row = await workflows.findById(result.workflowId);
    if (!row || row.status !== 'queued') return { ...result, status: 'running' };
    const queued = await workflows.listQueued(row.projectId);
    const position = queued.findIndex((w) => w.id === row.id) + 1;
    const waitsForProject = position > 1 || (await workflows.findActive(row.projectId)) !== undefined;
    await journal.post(row.projectId, row.id, {
      role: 'system',
      type: 'status',
      content: waitsForProject
        ? `${kindLabel(row.kind)} queued at position ${position}: it starts when the workflows ahead of it finish.`
        : `${kindLabel(row.kind)} queued: ${await this.slotShortage(tx, caller, row)}; it starts when ${(await this.deps.nodes?.waitingFor(row, tx)) ? 'one is running' : 'one finishes'}.`,
    }, tx);
    return { ...result, status: 'queued', queuePosition: position };
  }

  /**
   * Why a workflow of `caller` that could start did not get a build slot, as a clause: no live
   * worker has its builder; the owner's plan bound on running workflows when it is reached; else
   * the server's cap.
   */
  private async slotShortage(tx: Tx, caller: Caller, row: WorkflowRow): Promise<string> {
    const unserved = await this.deps.nodes?.waitingFor(row, tx);
    if (unserved) return unserved;
    const { maxRunning } = workflowBounds(limitsFor(this.deps.plans, caller.plan));
    const running = (await tx.workflows.runningByOwner()).get(caller.userId) ?? 0;
    if (running >= maxRunning) return `your plan allows ${maxRunning} running workflow${maxRunning === 1 ? '' : 's'} at once and you have ${running}`;
    // A node that claims nothing (the `api` role) waits for the build workers.
    if (!this.deps.engine.claims) return 'every build worker is busy (or none is running)';
    return 'the server is running its maximum number of workflows';
  }

  /**
   * The answer for an answered workflow that waits for a build slot: `queued` (position 1: it is
   * its project's next), with a status message saying why it waits; `running` when it resumed
   * meanwhile.
   */
  private async reportAnsweredWaiting(tx: Tx, caller: Caller, result: SendMessageResult): Promise<SendMessageResult> {
    const { journal } = this.deps;
    const row = await tx.workflows.findById(result.workflowId);
    if (!row || row.status !== 'waiting_for_input' || (await tx.questions.pendingOf(row.id))) return result;
    await journal.post(row.projectId, row.id, {
      role: 'system',
      type: 'status',
      content: `Answer received. ${capitalised(await this.slotShortage(tx, caller, row))}: the ${kindLabel(row.kind).toLowerCase()} continues when a slot frees.`,
    }, tx);
    return { ...result, status: 'queued', queuePosition: 1 };
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
   * The session with one page of the app files of the pending code question (its question kind's
   * `filePages`, see `builders/builder-module.ts`): page 1 is what the prompt shows, the others
   * what it lists. The prompt itself is left out of this answer (it was read already), so the
   * result stays small.
   * @throws ServiceError -32004/-32003 like `session`; -32602 when no code question is waiting,
   *   or `page` is past the last page (`data.pages`).
   */
  async questionFiles(caller: Caller, projectId: string, page: number): Promise<SessionView> {
    const view = await this.session(caller, projectId);
    const question = view.pendingQuestion;
    const row = question && questionKind(question.kind)?.filePages ? await this.deps.store.repos.questions.pendingOf(question.workflowId) : undefined;
    // Stored when the question was asked (every node serves the same pages); read from this
    // node's workspace for a question stored before pages were.
    const stored = row ? await this.deps.store.repos.questions.filePagesOf(row.id) : undefined;
    const pages = stored !== undefined ? (JSON.parse(stored) as PagedFile[][]) : row?.rules ? await questionKind(row.kind)?.filePages?.(row.rules, join(this.deps.workspacesDir, row.projectId)) : null;
    if (!question || !pages) throw invalidParameter('questionFilesPage', 'can be read only while a code question is waiting (see pendingQuestion)');
    if (page > pages.length) throw invalidParameter('questionFilesPage', `must be at most ${pages.length} (the question's files fill ${pages.length} page${pages.length === 1 ? '' : 's'})`, { pages: pages.length });
    const { format: _format, ...rest } = question;
    return {
      ...view,
      pendingQuestion: { ...rest, prompt: '(left out while reading files: call svc_get_session without questionFilesPage for the prompt)' },
      questionFiles: { questionId: question.questionId, page, pages: pages.length, files: pages[page - 1]! },
    };
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
   * The `after` that makes `messages` return the latest `limit` messages: `seq` grows by one per
   * project, so that is the newest `seq` minus `limit` (at least 0). For the web console, which
   * opens a conversation at its end. @throws -32004/-32003 like `messages`
   */
  async latestPageStart(caller: Caller, projectId: string, limit: number): Promise<number> {
    await this.deps.access.readable(caller, projectId);
    return Math.max(0, (await this.deps.store.repos.messages.lastSeq(projectId)) - limit);
  }

  /**
   * A page of the conversation, oldest first. A reader who is not the project's owner (a public
   * project) gets the project's private "latest" update URL hidden (README "Expo updates").
   * @throws -32004/-32003
   */
  async messages(caller: Caller, input: { projectId: string; after?: number | undefined; limit?: number | undefined }): Promise<MessagesPage> {
    const project = await this.deps.access.readable(caller, input.projectId);
    const owner = project.ownerId === caller.userId;
    const after = input.after ?? 0;
    const limit = input.limit ?? MESSAGES_PAGE_DEFAULT;
    const rows = await this.deps.store.repos.messages.list(input.projectId, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      messages: page.map((row) => toMessageView(row, owner)),
      hasMore: rows.length > limit,
      nextAfter: page.length > 0 ? page[page.length - 1]!.seq : after,
    };
  }

  /**
   * Cancels a workflow of the project: the given one, else the active one. A queued workflow is
   * cancelled at once; an active one is stopped (its builder killed after a grace period) before
   * this returns. A finished one is left as it is (`cancelled: false`).
   * @throws ServiceError -32004 when the workflow is unknown or not the project's (`data`
   *   `{resource: "workflow", reason: "unknown id"}`), or when no workflow is active and none was
   *   named (`{resource: "workflow", reason: "none active"}`); -32003 for a project the caller
   *   does not own.
   */
  async cancel(caller: Caller, input: { projectId: string; workflowId?: string | undefined }): Promise<CancelResult> {
    const { access, journal, engine } = this.deps;
    const { workflows } = this.deps.store.repos;
    await access.writable(caller, input.projectId);
    const target = input.workflowId ? await workflows.findById(input.workflowId) : await workflows.findActive(input.projectId);
    // Another project's workflow is "unknown id" too: its existence is not the caller's to learn.
    if (!target || target.projectId !== input.projectId) throw notFound({ resource: 'workflow', reason: input.workflowId ? 'unknown id' : 'none active' });

    if (isTerminal(target.status)) return { workflowId: target.id, status: target.status, cancelled: false };

    const label = kindLabel(target.kind);
    if (await journal.transition(target, 'queued', 'cancel', {}, { role: 'system', type: 'status', content: `${label} cancelled before it started.` })) {
      return { workflowId: target.id, status: 'cancelled', cancelled: true };
    }
    const cancelling = { role: 'system' as const, type: 'status' as const, content: `Cancelling the ${label.toLowerCase()}…` };
    // The status may move between the read and the write: try each active status in turn.
    for (const from of statusesBefore('cancel', 'cancelling')) if (await journal.transition(target, from, 'cancel', {}, cancelling)) break;
    await engine.cancel(target.id);
    const final = (await workflows.findById(target.id))!;
    return { workflowId: final.id, status: final.status, cancelled: final.status === 'cancelled' };
  }

  private view(row: WorkflowRow, base: Pick<PublicUrl, 'artifactBaseOf'>): Promise<WorkflowView> {
    return workflowViewOf(this.deps.store.repos.artifacts, row, base);
  }
}

/**
 * Whether a message answers the pending question, if one waits: it does with `questionId`, and
 * with neither `questionId` nor `kind`; with `kind` alone it is a new instruction.
 */
function answersPending(input: SendMessageInput): boolean {
  return input.questionId !== undefined || input.kind === undefined;
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

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
