/**
 * The session views last read, per project (docs/architecture.md "The session cache"): a host
 * polls `svc_get_session` while a build runs, and the answer is the same until something a
 * session shows changes. An entry is served only while the store's `rowGeneration()` and the
 * artifact base URL (previews' links are built from it at read time) are what they were when the
 * entry's rows were read; a store that cannot tell (PostgreSQL: `null`) caches nothing. Nothing
 * in a session is computed from the clock, so no entry ends by time alone.
 */
import type { SessionView } from './resource-shapes.js';

/** Projects whose views are kept at most; the oldest entry makes room for a new one. */
const MAX_ENTRIES = 1000;

/** The views, valid for one generation and one artifact base (see the file comment). */
export class SessionCache {
  private readonly entries = new Map<string, SessionView>();
  private generation: number | null = null;
  private base = '';

  /**
   * The view of `projectId` read at `generation` with artifact base `base`, if one is kept.
   * A generation or base other than the entries' drops them all.
   */
  get(projectId: string, generation: number | null, base: string): SessionView | undefined {
    if (generation === null) return undefined;
    if (generation !== this.generation || base !== this.base) {
      this.entries.clear();
      this.generation = generation;
      this.base = base;
      return undefined;
    }
    return this.entries.get(projectId);
  }

  /**
   * Keeps `view`, read from rows read after `generation` was taken (before the reads: a write
   * made during them moves the generation, so the view is never served). A view of a generation
   * other than the current entries' is not kept. The view is frozen: every caller shares it.
   */
  set(projectId: string, generation: number | null, base: string, view: SessionView): void {
    if (generation === null || generation !== this.generation || base !== this.base) return;
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(projectId))
      this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(projectId, deepFreeze(view));
  }
}

/** `value` with every object in it frozen. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
