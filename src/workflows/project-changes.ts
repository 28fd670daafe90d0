/**
 * Notices that a project's workflows or conversation changed, fanned out to this process's
 * listeners per project (docs/console.md "Web console": the console pushes these to browsers over
 * Server-Sent Events instead of being polled; `svc_get_session` waits on them). They come from the
 * store's `project` notices, of every node, and a store reset wakes every listener
 * (docs/workflows.md "Change notices"). A notice carries only the project id; a listener reads
 * the new state itself. Listeners are called synchronously, so they must only schedule work.
 */

/** Called with the id of a project that changed. */
type ChangeListener = (projectId: string) => void;

/** Subscriptions per project id. */
export class ProjectChanges {
  private readonly listeners = new Map<string, Set<ChangeListener>>();

  /** Tells the project's listeners that something changed. Never throws. */
  notify(projectId: string): void {
    const set = this.listeners.get(projectId);
    if (!set) return;
    for (const listener of set) {
      try {
        listener(projectId);
      } catch {
        // A listener's failure is its own; the writer must not see it.
      }
    }
  }

  /**
   * Tells every listener that its project may have changed: the store's notices may have been
   * missed (a reset: another process committed on SQLite, or a listener connection came back).
   */
  notifyAll(): void {
    for (const projectId of [...this.listeners.keys()]) this.notify(projectId);
  }

  /** Subscribes to one project's changes. @returns the function that unsubscribes. */
  subscribe(projectId: string, listener: ChangeListener): () => void {
    let set = this.listeners.get(projectId);
    if (!set) {
      set = new Set();
      this.listeners.set(projectId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(projectId) === set) this.listeners.delete(projectId);
    };
  }

  /** Ids of the projects that have listeners (to tell them about changes made by other processes). */
  watched(): string[] {
    return [...this.listeners.keys()];
  }
}
