/**
 * A server-wide semaphore for the `expo` builder's heavy steps (type check, exports), separate
 * from the workflow concurrency limit: on a 2-core machine one Metro export at a time is faster
 * overall than two fighting for the CPU. Waiting for a slot stops at once when the workflow is
 * cancelled.
 */

/** Counting semaphore with abortable waits. */
export class HeavyStepSemaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** @param slots heavy steps running at once (at least 1). */
  constructor(readonly slots: number = 1) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error('heavy step slots must be a whole number of at least 1');
  }

  /** Heavy steps running now. */
  get running(): number {
    return this.active;
  }

  /**
   * Runs `fn` once a slot is free, and frees the slot when it settles.
   * @param onQueued called when the step has to wait for a slot (for a progress message).
   * @throws the signal's reason when it aborts while waiting; whatever `fn` throws.
   */
  async run<T>(signal: AbortSignal, fn: () => Promise<T>, onQueued?: () => void): Promise<T> {
    await this.acquire(signal, onQueued);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal, onQueued?: () => void): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.slots) {
      this.active++;
      return Promise.resolve();
    }
    onQueued?.();
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(grant);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(): void {
    this.active--;
    const next = this.waiting.shift();
    if (next) next();
  }
}
