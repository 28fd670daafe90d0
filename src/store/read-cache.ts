/**
 * Read-through caching for the hot path (docs/cli.md#command-line: per-request work is only the request's
 * own work). A SQLite read costs about 4 µs here in WAL mode, a third of a small request's budget.
 *
 * Freshness: writes made through this process invalidate their entries directly (the repository
 * that writes also owns the cache); a write that makes cached rows stale publishes a `cache`
 * notice (`tokens`, `project:<id>`: `publishCacheChange`), which reaches every node (PostgreSQL:
 * `NOTIFY`, within milliseconds) and clears the caches that watch it. A reset (SQLite: another
 * process committed, seen through `PRAGMA data_version` every 250 ms; PostgreSQL: the listener
 * reconnected) clears every cache. That is the longest another node's change can go unseen,
 * except by an exact watch (the token cache): on SQLite it reads `data_version` on every look, so
 * another process's commit (`token revoke`) shows on the next request.
 */
import type { Store, StoreEvents } from './port.js';

/** A generation number that moves whenever cached rows may have changed elsewhere. */
export class ChangeWatch {
  private current = 0;

  /**
   * @param events the store's change notices: resets, and the `cache` notices `watches` accepts
   *   (default every one), move the generation.
   * @param watches which `cache` ids concern the cache (`tokens`, `project:<id>`).
   */
  constructor(
    private readonly events: StoreEvents,
    watches: (id: string) => boolean = () => true,
    private readonly exact = false,
  ) {
    events.onReset(() => this.current++);
    events.subscribe('cache', (id) => {
      if (watches(id)) this.current++;
    });
  }

  /**
   * A number that changes whenever another process may have committed since the last look. An
   * exact watch first looks for other processes' commits (`StoreEvents.catchUp`: SQLite), so a
   * commit made before this call always shows.
   */
  generation(): number {
    if (this.exact) this.events.catchUp?.();
    return this.current;
  }
}

/** A bounded map whose entries are dropped when another process writes to the database. */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  private seen = 0;
  private drops = 0;

  constructor(
    private readonly watch: ChangeWatch,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    if (this.watchMoved()) return undefined;
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
    this.drops++;
  }

  clear(): void {
    this.entries.clear();
    this.drops++;
  }

  /**
   * A number that moves whenever an entry was dropped (`delete`, `clear`, or the watch moved, as of
   * the last `get`): equal numbers mean every entry read between them is still valid.
   */
  dropped(): number {
    return this.drops;
  }

  /**
   * `dropped()` after a look at the watch (a move clears every entry first, as `get` does): equal
   * numbers from two calls mean that no entry was dropped and no change notice concerning the
   * cache arrived between them, so every entry read in between is still what `get` would return.
   */
  generation(): number {
    this.watchMoved();
    return this.drops;
  }

  /** Clears every entry when the watch moved since the last look; true then. */
  private watchMoved(): boolean {
    const generation = this.watch.generation();
    if (generation === this.seen) return false;
    this.seen = generation;
    this.clear();
    return true;
  }
}

/**
 * Tells every node's caches, through the store's `cache` notice `id` (`tokens`: a token was revoked,
 * a plan or a grant changed; `project:<id>`: a project row changed), that rows they may hold are
 * stale. Call it after the write committed: a node that hears it reads the new rows.
 * @throws the store's error when the notice cannot be sent.
 */
export async function publishCacheChange(store: Pick<Store, 'transaction'>, id: string): Promise<void> {
  await store.transaction(async (tx) => tx.publish({ kind: 'cache', id }));
}
