/**
 * The `/mcp` requests of one event-loop turn, started in its check phase under one look at other
 * processes' commits (docs/architecture.md "The reply memo"): a request is queued when it arrives;
 * in the turn's check phase (`setImmediate`) the turn's requests start one after another, each
 * inside `Store.oneLook` with a look they share. So the first look at other processes' commits
 * (on SQLite the token cache's `PRAGMA data_version` read) is made after each of them arrived and
 * serves them all: one statement per turn instead of one per request, and a commit that ended
 * before any of them was sent still shows to each.
 *
 * One after another: a request starts when the one before it has been answered, so that one
 * turn's requests are not all half-done at once (on SQLite a request is answered within its
 * microtasks; 32 started together held 32 pages of rows and replies alive, which the garbage
 * collector copied and promoted: docs/performance.md "One request at a time"). A request that
 * waits on I/O (a wait, PostgreSQL) holds back the rest of its turn only until the next check
 * phase, when they all start. A request waits at most until then.
 */

import type { SharedLook } from '../store/store.js';

/**
 * Runs `fn` with the looks at other processes' commits inside it answered by one look, shared by
 * every call given the same `shared` (`Store.oneLook`).
 */
export type OneLook = <T>(fn: () => T, shared?: SharedLook) => T;

interface Queued {
  start: () => Promise<void>;
  resolve: (work: Promise<void>) => void;
  reject: (error: unknown) => void;
}

/** The queue of one turn's requests (see the file comment). */
export class RequestTurn {
  private queue: Queued[] = [];

  constructor(private readonly oneLook: OneLook) {}

  /**
   * Queues a request's handling, started in this turn's check phase after the turn's requests
   * before it.
   * @returns a promise of the handling: it settles as `start()`'s promise does, and rejects with
   *   what `start` throws.
   */
  run(start: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ start, resolve, reject });
      if (this.queue.length === 1) setImmediate(this.flush);
    });
  }

  /** Starts the turn's requests one after another under one shared look (a request's failure is its own). */
  private readonly flush = (): void => {
    const queue = this.queue;
    this.queue = [];
    const shared: SharedLook = { looked: false };
    let next = 0;
    const startNext = (): void => {
      while (next < queue.length) {
        const request = queue[next++]!;
        let work: Promise<void>;
        try {
          work = this.oneLook(request.start, shared);
        } catch (error) {
          request.reject(error);
          continue;
        }
        request.resolve(work);
        work.then(startNext, startNext);
        return;
      }
    };
    startNext();
    // The ones still queued behind a request that waits on I/O start in the next check phase.
    if (next < queue.length)
      setImmediate(() => {
        while (next < queue.length) startNext();
      });
  };
}
