/**
 * Which workflow takes the next free build slot (docs/workflows.md, "Fair shares"): round-robin
 * across users, oldest first within a user (so FIFO within a project), and never past a user's
 * plan bound on running workflows. The turns are this engine's memory: each engine shares out
 * its own slots.
 */

/** What the scheduler needs to know of a workflow that could take a slot. */
export interface Contender {
  /** The project owner's user id. */
  ownerId: string;
  /** The owner's plan name. */
  plan: string;
}

/** Users beyond this many remembered turns are forgotten when they have nothing waiting. */
const REMEMBERED_USERS = 10_000;

/** Round-robin turns of users for this engine's build slots. */
export class FairShares {
  private turn = 0;
  /** The turn at which each user last got a slot (absent: never, or forgotten). */
  private readonly lastTurn = new Map<string, number>();

  /**
   * The contender that takes the next slot: among the users below their running bound, the one
   * served longest ago (never served first), and that user's first contender in `contenders`.
   * @param contenders oldest first (the caller's order decides FIFO within a user).
   * @param running workflows holding a slot now, per user, server-wide.
   * @param maxRunning the plan's bound on a user's running workflows.
   * @returns undefined when no contender may start.
   */
  pick<T extends Contender>(
    contenders: readonly T[],
    running: ReadonlyMap<string, number>,
    maxRunning: (plan: string) => number,
  ): T | undefined {
    let best: T | undefined;
    let bestTurn = Number.POSITIVE_INFINITY;
    const seen = new Set<string>();
    for (const c of contenders) {
      if (seen.has(c.ownerId)) continue;
      seen.add(c.ownerId);
      if ((running.get(c.ownerId) ?? 0) >= maxRunning(c.plan)) continue;
      const turn = this.lastTurn.get(c.ownerId) ?? 0;
      if (turn < bestTurn) {
        best = c;
        bestTurn = turn;
      }
    }
    if (this.lastTurn.size > REMEMBERED_USERS) {
      // Forgetting a user without work only moves them to the front of their next wait.
      for (const user of this.lastTurn.keys()) if (!seen.has(user)) this.lastTurn.delete(user);
    }
    return best;
  }

  /** Records that `ownerId` took a slot (their turn moves to the back). */
  served(ownerId: string): void {
    this.lastTurn.set(ownerId, ++this.turn);
  }
}
