/**
 * The reaper's rule after a store outage (docs/workflows.md, "Leases"; docs/operators.md, "When
 * PostgreSQL restarts"): while the database cannot be reached no runner can renew its leases, so a
 * lease that ended during the outage says nothing about its runner. A reaper that saw its store
 * fail therefore takes nothing over until its store has answered for one full lease again: every
 * live runner has renewed its leases by then (a runner renews several times per lease), and only the
 * leases of runners that are really gone are still expired.
 */

/** When the reaper may take leases over, given what it saw of its store. */
export class ReapGate {
  /** `performance.now()` (ms) before which nothing is taken over; Infinity while the store fails; 0 when steady. */
  private notBefore = 0;

  /**
   * @param leaseMs the length of a lease (ms): how long the store must answer again after an outage
   * @param now a monotonic clock in ms (default `performance.now()`); the database's clock plays no
   *   part, since only this process's view of its store matters
   */
  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The store may be out: a call to it failed because it could not answer (a reap, a renewal; not a
   * lock held elsewhere or a wrong statement), or a connection to the database
   * was lost (`StoreEvents.onConnectionLost`). Takes nothing over until a lease after the next reap
   * that reads the store.
   */
  storeFailed(): void {
    this.notBefore = Infinity;
  }

  /**
   * The store's change-notice connection came back after being lost: the database was out, maybe
   * between two of this engine's statements. Takes over nothing for a full lease from now.
   */
  reconnected(): void {
    if (this.notBefore !== Infinity) this.notBefore = Math.max(this.notBefore, this.now() + this.leaseMs);
  }

  /**
   * A reap read the store: true when it may take expired leases over now. The first read that
   * succeeds after a failure starts the full lease of waiting.
   */
  mayTakeOver(): boolean {
    const now = this.now();
    if (this.notBefore === Infinity) this.notBefore = now + this.leaseMs;
    return now >= this.notBefore;
  }

  /** ms until `mayTakeOver` may answer true (0 when it does now). */
  waitMs(): number {
    return Math.max(0, this.notBefore - this.now());
  }
}
