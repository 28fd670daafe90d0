/**
 * Read-through caching for the hot path (README.md#command-line: per-request work is only the request's
 * own work). A SQLite read costs about 4 µs here in WAL mode, a third of a small request's budget.
 *
 * Freshness: writes made through this process invalidate their entries directly (the repository
 * that writes also owns the cache); commits by another process reach the store's events as a
 * reset (SQLite: `PRAGMA data_version`, looked at every 250 ms) or as a `cache` notice, and clear
 * every cache. That interval is the longest another process's change can go unseen.
 */
import type { StoreEvents } from './port.js';

/** A generation number that moves whenever cached rows may have changed elsewhere. */
export class ChangeWatch {
  private current = 0;

  /** @param events the store's change notices: resets and `cache` events move the generation. */
  constructor(events: StoreEvents) {
    events.onReset(() => this.current++);
    events.subscribe('cache', () => this.current++);
  }

  /** A number that changes whenever another process may have committed since the last look. */
  generation(): number {
    return this.current;
  }
}

/** A bounded map whose entries are dropped when another process writes to the database. */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  private seen = 0;

  constructor(
    private readonly watch: ChangeWatch,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    const generation = this.watch.generation();
    if (generation !== this.seen) {
      this.seen = generation;
      this.entries.clear();
      return undefined;
    }
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
