/**
 * The waits of `svc_get_session` with `waitSeconds` (docs/contract.md#tools): the session is read
 * again on each change notice of the project (no polling) until the followed workflow changes,
 * the time is up, the client goes away or a newer wait of the same user supersedes it
 * (`open-waits.ts`); progress lines and heartbeats go to `onStep` (`wait-heartbeat.ts`).
 */
import type { Caller } from '../auth/caller.js';
import type { ProjectChanges } from '../workflows/project-changes.js';
import { OpenWaits } from './open-waits.js';
import { StepClock, startHeartbeat } from './wait-heartbeat.js';
import type { SessionView, WorkflowView } from './resource-shapes.js';

/** How a session wait is followed and ended (see `SessionWaits.wait`). */
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

/** What the waits need: a session read (with its access check) and the project change notices. */
export interface SessionWaitDeps {
  /** Reads the session as `svc_get_session` does (`SessionReader.session`); throws -32004/-32003. */
  read: (caller: Caller, projectId: string) => Promise<SessionView>;
  /** Notices of project changes: what wakes a waiting `svc_get_session`. */
  changes: Pick<ProjectChanges, 'subscribe'>;
}

/** Why a wait ended (the session's `wait.reason`), for a wait that did wait. */
type EndReason = 'changed' | 'time_up' | 'client_gone' | 'superseded';

/** A wait that goes on after the first read: what it follows, and how far it had got. */
interface Followed {
  caller: Caller;
  projectId: string;
  /** The session first read. */
  first: SessionView;
  /** The followed workflow's id. */
  workflowId: string;
  /** Its `fingerprint` in `first`. */
  mark: string;
}

/** The open session waits, with each user's bound and each followed step's clock. */
export class SessionWaits {
  /** Each user's open session waits, bounded (`open-waits.ts`). */
  private readonly openWaits = new OpenWaits();
  /** Since when each followed workflow is at its step, for the waits' heartbeats (`wait-heartbeat.ts`). */
  private readonly steps = new StepClock();

  constructor(private readonly deps: SessionWaitDeps) {}

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
  async wait(caller: Caller, projectId: string, options: SessionWaitOptions): Promise<SessionView> {
    const first = await this.deps.read(caller, projectId);
    if (options.waitMs <= 0) return first;
    const followed = first.activeWorkflow ?? first.queuedWorkflows[0];
    if (!followed) return { ...first, wait: { changed: false, reason: 'nothing_active' } };
    // Its question is asked already: nothing changes until it is answered, so waiting would only
    // hold the caller (who is the one to answer, or to relay it) for nothing.
    if (first.pendingQuestion?.workflowId === followed.id)
      return { ...first, wait: { changed: false, reason: 'question_pending' } };
    const mark = fingerprint(first, followed.id);
    if (options.signal?.aborted) return { ...first, wait: { changed: false, reason: 'client_gone' } };
    return this.follow({ caller, projectId, first, workflowId: followed.id, mark }, options);
  }

  /** Waits on the change notices until the followed workflow changes or the wait ends (see `wait`). */
  private follow(followed: Followed, options: SessionWaitOptions): Promise<SessionView> {
    const { caller, projectId, first, workflowId, mark } = followed;
    return new Promise<SessionView>((resolve, reject) => {
      let done = false;
      let scheduled = false;
      // Counted before the first notice, so a caller that has seen it knows the wait is open.
      const release = this.openWaits.enter(caller.userId, () => end('superseded'));
      options.onStep?.(describeFollowed(first, workflowId));
      this.steps.secondsAt(workflowId, mark);
      // A step that runs long still shows the host the call is alive (`wait-heartbeat.ts`).
      const onStep = options.onStep;
      const stopBeat = onStep
        ? startHeartbeat(
            () =>
              onStep(
                `${describeFollowed(first, workflowId)} (this step has run ${this.steps.secondsAt(workflowId, mark)} s)`,
              ),
            options.heartbeatMs,
          )
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
      const end = (reason: EndReason, view?: SessionView) => {
        if (done) return;
        settle();
        (view ? Promise.resolve(view) : this.deps.read(caller, projectId)).then(
          (seen) => resolve({ ...seen, wait: { changed: reason === 'changed', reason } }),
          reject,
        );
      };
      const check = async () => {
        scheduled = false;
        if (done) return;
        let view: SessionView;
        try {
          view = await this.deps.read(caller, projectId);
        } catch (error) {
          if (done) return;
          settle();
          reject(error);
          return;
        }
        if (done || fingerprint(view, workflowId) === mark) return;
        options.onStep?.(describeFollowed(view, workflowId));
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
}

/** Where the followed workflow stands: equal strings mean nothing a waiting caller cares about changed. */
function fingerprint(view: SessionView, workflowId: string): string {
  const w = findWorkflow(view, workflowId);
  if (!w) return 'gone';
  return JSON.stringify([
    w.status,
    w.step.index,
    w.step.total,
    w.step.name,
    view.pendingQuestion?.workflowId === workflowId ? view.pendingQuestion.questionId : null,
  ]);
}

/** The workflow `workflowId` in the session: active, last finished or queued; undefined when gone. */
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
