/**
 * The per-message deadlines of the JSON-RPC gateway on one timer. Every message gets the same
 * duration, so their deadlines come in the order the messages do: the pending ones wait in an
 * insertion-ordered set, and one unref'd timer is armed for the earliest. Starting and ending a
 * deadline is a set insert and delete; a timer is created only when the earliest deadline passes
 * (or the set was empty), not per message. A deadline moved out (`extend`) leaves the set and
 * gets a timer of its own: that is the rare waiting call.
 */

/** One message's deadline. */
export interface Deadline {
  /** The message was answered: the deadline will not fire. */
  cancel(): void;
  /** Moves the deadline to `ms` milliseconds from now (it fires then, unless cancelled first). */
  extend(ms: number): void;
}

/** A deadline of the queue: when it is due (ms on `performance.now()`'s clock) and what to run. */
class Entry implements Deadline {
  /** The entry's own timer, once `extend` took it out of the queue. */
  private own: NodeJS.Timeout | undefined;

  constructor(
    private readonly pending: Set<Entry>,
    readonly at: number,
    readonly onExpire: () => void,
  ) {}

  cancel(): void {
    this.pending.delete(this);
    if (this.own) clearTimeout(this.own);
  }

  extend(ms: number): void {
    this.cancel();
    this.own = setTimeout(this.onExpire, ms);
    this.own.unref();
  }
}

/** Deadlines of one duration, fired by one shared timer. */
export class DeadlineQueue {
  private readonly pending = new Set<Entry>();
  private timer: NodeJS.Timeout | undefined;

  /** @param durationMs time from `start` to the deadline, in ms. */
  constructor(private readonly durationMs: number) {}

  /**
   * Starts a deadline `durationMs` from now; `onExpire` runs once when it passes, unless the
   * deadline is cancelled first.
   */
  start(onExpire: () => void): Deadline {
    const entry = new Entry(this.pending, performance.now() + this.durationMs, onExpire);
    this.pending.add(entry);
    if (!this.timer) this.arm(this.durationMs);
    return entry;
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  /** Fires every deadline that has passed, then arms the timer for the next one, if any. */
  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const entry of this.pending) {
      if (entry.at > now) {
        this.arm(entry.at - now);
        return;
      }
      this.pending.delete(entry);
      entry.onExpire();
    }
  }
}
