/**
 * The `/mcp` requests of one event-loop turn, started together (docs/architecture.md "The reply
 * memo"): a request is queued when it arrives and started in the turn's check phase
 * (`setImmediate`), with every request that arrived in the same turn, inside one `Store.oneLook`.
 * So the first look at other processes' commits (on SQLite the token cache's `PRAGMA
 * data_version` read) is made after each of them arrived and serves them all: one statement per
 * turn instead of one per request, and a commit that ended before any of them was sent still
 * shows to each. A request waits at most until the end of the turn it arrived in.
 */

/** Runs `fn` with the looks at other processes' commits inside it answered by one (`Store.oneLook`). */
export type OneLook = <T>(fn: () => T) => T;

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
   * Queues a request's handling, started in this turn's check phase with the turn's other requests.
   * @returns a promise of the handling: it settles as `start()`'s promise does, and rejects with
   *   what `start` throws.
   */
  run(start: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ start, resolve, reject });
      if (this.queue.length === 1) setImmediate(this.flush);
    });
  }

  /** Starts every queued request inside one look (a request's failure is its own). */
  private readonly flush = (): void => {
    const queue = this.queue;
    this.queue = [];
    this.oneLook(() => {
      for (const request of queue) {
        try {
          request.resolve(request.start());
        } catch (error) {
          request.reject(error);
        }
      }
    });
  };
}
