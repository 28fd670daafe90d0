/**
 * The server-wide slots of the `expo` builder's heavy steps (type check, exports), separate from
 * the workflow concurrency limit: on a 2-core machine one Metro export at a time is faster
 * overall than two fighting for the CPU.
 *
 * The slots are shared fairly between users: each user has a queue of its own (FIFO within the
 * user), and a freed slot goes to the waiting user holding the fewest slots, among those the one
 * served longest ago (round-robin). A user takes a slot beyond its share only while nobody else
 * waits, so one user's steps delay another user's by at most the steps already running (each
 * bounded: docs/security.md "The build sandbox"). Waiting stops at once when the workflow is cancelled.
 */

/** Owners beyond this many remembered turns are forgotten when they hold and wait for nothing. */
const REMEMBERED_OWNERS = 10_000;

/** One step waiting for a slot. */
interface Waiter {
  owner: string;
  grant: () => void;
}

/** Fair, abortable slots for heavy steps (see the file comment). */
export class HeavyStepSemaphore {
  private active = 0;
  /** Slots held now, per owner (absent: none). */
  private readonly held = new Map<string, number>();
  /** Waiting steps per owner, oldest first (absent: none waiting). */
  private readonly queues = new Map<string, Waiter[]>();
  /** The turn at which each owner last got a slot (absent: never, or forgotten). */
  private readonly lastTurn = new Map<string, number>();
  private turn = 0;

  /** @param slots heavy steps running at once (at least 1). */
  constructor(readonly slots: number = 1) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error('heavy step slots must be a whole number of at least 1');
  }

  /** Heavy steps running now. */
  get running(): number {
    return this.active;
  }

  /** Steps waiting for a slot now (all owners). */
  get waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  /**
   * Runs `fn` once a slot is free and it is `owner`'s turn, and frees the slot when it settles.
   * @param owner whose step this is (the project owner's user id); steps of one owner run in order.
   * @param onQueued called when the step has to wait for a slot (for a progress message).
   * @throws the signal's reason when it aborts while waiting; whatever `fn` throws.
   */
  async runFor<T>(owner: string, signal: AbortSignal, fn: () => Promise<T>, onQueued?: () => void): Promise<T> {
    await this.acquire(owner, signal, onQueued);
    try {
      return await fn();
    } finally {
      this.release(owner);
    }
  }

  /**
   * Runs `fn` once a slot is free, for a caller that has no owners to tell apart (first come,
   * first served). See `runFor`.
   */
  run<T>(signal: AbortSignal, fn: () => Promise<T>, onQueued?: () => void): Promise<T> {
    return this.runFor('', signal, fn, onQueued);
  }

  private acquire(owner: string, signal: AbortSignal, onQueued?: () => void): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.slots && this.waiting === 0) {
      this.take(owner);
      return Promise.resolve();
    }
    onQueued?.();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const queue = this.queues.get(owner);
        const at = queue?.indexOf(waiter) ?? -1;
        if (at !== -1) {
          queue!.splice(at, 1);
          if (queue!.length === 0) this.queues.delete(owner);
        }
        reject(signal.reason);
      };
      const queue = this.queues.get(owner);
      if (queue) queue.push(waiter);
      else this.queues.set(owner, [waiter]);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private take(owner: string): void {
    this.active++;
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    this.lastTurn.set(owner, ++this.turn);
  }

  private release(owner: string): void {
    this.active--;
    const left = (this.held.get(owner) ?? 1) - 1;
    if (left > 0) this.held.set(owner, left);
    else this.held.delete(owner);
    while (this.active < this.slots) {
      const next = this.nextOwner();
      if (next === undefined) break;
      const queue = this.queues.get(next)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.queues.delete(next);
      this.take(next);
      waiter.grant();
    }
    if (this.lastTurn.size > REMEMBERED_OWNERS) {
      // Forgetting an owner with nothing held or waiting only moves it to the front of its next wait.
      for (const known of this.lastTurn.keys())
        if (!this.held.has(known) && !this.queues.has(known)) this.lastTurn.delete(known);
    }
  }

  /** The waiting owner holding the fewest slots; among those, the one served longest ago. */
  private nextOwner(): string | undefined {
    let best: string | undefined;
    let bestHeld = Number.POSITIVE_INFINITY;
    let bestTurn = Number.POSITIVE_INFINITY;
    for (const owner of this.queues.keys()) {
      const held = this.held.get(owner) ?? 0;
      const turn = this.lastTurn.get(owner) ?? 0;
      if (held < bestHeld || (held === bestHeld && turn < bestTurn)) {
        best = owner;
        bestHeld = held;
        bestTurn = turn;
      }
    }
    return best;
  }
}
