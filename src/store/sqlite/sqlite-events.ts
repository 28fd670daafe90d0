/**
 * `StoreEvents` for SQLite (docs/architecture.md "Change notices"): an in-process emitter, fed by
 * the transactions of this process after they commit, plus a poll of `PRAGMA data_version`, which
 * moves when another connection (the CLI, a second server on the same file) commits. SQLite cannot
 * say what another process changed, so such a commit is a reset: caches clear, live views and the
 * engine look again.
 */
import type { StoreEvent, StoreEvents } from '../port.js';

/** The emitter and the poll (see above). */
export class SqliteEvents implements StoreEvents {
  private readonly listeners = new Map<StoreEvent['kind'], Set<(id: string) => void>>();
  private readonly resetListeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private version: number | undefined;

  /**
   * @param dataVersion reads `PRAGMA data_version` (throws once the database is closed).
   * @param pollMs how often it is read while anyone listens for resets (ms).
   */
  constructor(
    private readonly dataVersion: () => number,
    private readonly pollMs: number,
  ) {}

  subscribe(kind: StoreEvent['kind'], listener: (id: string) => void): () => void {
    let set = this.listeners.get(kind);
    if (!set) {
      set = new Set();
      this.listeners.set(kind, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    this.startPoll();
    return () => {
      this.resetListeners.delete(listener);
      if (this.resetListeners.size === 0) this.stopPoll();
    };
  }

  /** Delivers committed events to this process's listeners. A listener's failure is its own. */
  deliver(events: readonly StoreEvent[]): void {
    for (const event of events) {
      const set = this.listeners.get(event.kind);
      if (!set) continue;
      for (const listener of set) {
        try {
          listener(event.id);
        } catch {
          // The writer must not see a listener's failure.
        }
      }
    }
  }

  /** Looks at `data_version` now; a change is another process's commit: every reset listener is called. */
  check(): void {
    let version: number;
    try {
      version = this.dataVersion();
    } catch {
      return;
    }
    if (this.version === undefined) {
      this.version = version;
      return;
    }
    if (version === this.version) return;
    this.version = version;
    for (const listener of [...this.resetListeners]) {
      try {
        listener();
      } catch {
        // As above.
      }
    }
  }

  /** `StoreEvents.catchUp`: the poll's look, now (the reset listeners run when another process committed). */
  catchUp(): void {
    this.check();
  }

  /** Stops the poll (the store is closing). */
  stopPoll(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private startPoll(): void {
    if (this.timer) return;
    this.check();
    this.timer = setInterval(() => this.check(), this.pollMs);
    this.timer.unref();
  }
}
