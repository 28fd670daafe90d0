/**
 * Read-through caching for the hot path (README.md#command-line: per-request work is only the request's
 * own work). A SQLite read costs about 4 µs here in WAL mode, a third of a small request's budget.
 *
 * Freshness: writes made through this process invalidate their entries directly (the repository
 * that writes also owns the cache); commits by another process on the same database file (the CLI,
 * a second server) are seen through SQLite's `PRAGMA data_version`, checked at most every
 * `recheckMs`, and clear every cache. That interval (250 ms by default) is the longest another
 * process's change can go unseen.
 */

/** Watches for commits by other connections to the same database file. */
export class ExternalChangeWatch {
  private version: number | undefined;
  private checkedAt = 0;
  private current = 0;

  /** @param readDataVersion runs `PRAGMA data_version`. */
  constructor(
    private readonly readDataVersion: () => number,
    private readonly recheckMs = 250,
  ) {}

  /** A number that changes whenever another connection has committed since the last look. */
  generation(): number {
    const now = Date.now();
    if (now - this.checkedAt >= this.recheckMs) {
      this.checkedAt = now;
      const version = this.readDataVersion();
      if (version !== this.version) {
        this.version = version;
        this.current++;
      }
    }
    return this.current;
  }
}

/** A bounded map whose entries are dropped when another process writes to the database. */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  private seen = -1;

  constructor(
    private readonly watch: ExternalChangeWatch,
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
