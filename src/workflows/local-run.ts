/** A workflow this process runs: its abort controller, its pending question, its process groups. */

/** Why a run's signal aborted: the user cancelled, the server shuts down, or the lease was lost. */
export type AbortCause = 'cancel' | 'shutdown' | 'lease_lost';

/** A question the builder waits on, with the callbacks that end the wait. */
export interface Waiting {
  questionId: string;
  resolve: (answer: string) => void;
  reject: (reason: unknown) => void;
}

/** One run of a builder in this process. */
export class LocalRun {
  readonly controller = new AbortController();
  /** Set while the builder waits for an answer. */
  waiting: Waiting | null = null;
  /** Process groups the builder reported and has not released, with their leader's identity (see process-groups.ts). */
  readonly groups = new Map<number, string | null>();
  /** True once its claim committed and its builder started (before that the store does not show it as this runner's). */
  launched = false;
  /** True once its builder returned or threw: the run is recording how it ended. */
  finishing = false;
  /** True once the runner lost its lease: from then on it writes nothing. */
  lost = false;
  /** Settles when the run has ended and written its outcome. */
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly workflowId: string,
    readonly projectId: string,
  ) {}

  /** Aborts the builder (once) and ends a pending question's wait with `cause`. */
  abort(cause: AbortCause): void {
    if (!this.controller.signal.aborted) this.controller.abort(cause);
    this.waiting?.reject(cause);
  }

  /** Why the run was aborted, or null. */
  get cause(): AbortCause | null {
    return this.controller.signal.aborted ? (this.controller.signal.reason as AbortCause) : null;
  }
}

/** Thrown into a builder's call when its runner no longer holds the workflow. */
export class LeaseLostError extends Error {
  constructor(workflowId: string) {
    super(`This server no longer holds workflow ${workflowId}: another server took it over.`);
    this.name = 'LeaseLostError';
  }
}
