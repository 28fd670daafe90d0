/**
 * A first-in, first-out asynchronous mutex: one holder at a time in this process, waiters served
 * in the order they asked. The SQLite adapter holds it for each transaction (docs/architecture.md
 * "The store port").
 */
export class FifoMutex {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  /** True while someone holds it. */
  get locked(): boolean {
    return this.held;
  }

  /** Takes the mutex when nobody holds it. @returns true when the caller now holds it (and must `release` it once). */
  tryAcquire(): boolean {
    if (this.held) return false;
    this.held = true;
    return true;
  }

  /** Resolves once the caller holds the mutex; it must call `release` exactly once afterwards. */
  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Hands the mutex to the oldest waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}
