/**
 * The session waits each user holds open (`svc_get_session` with `waitSeconds`, see
 * docs/contract.md#tools). Every open wait holds one of the HTTP listener's request slots for up
 * to 45 s (`wait-heartbeat.ts`), so one user's waits are bounded: a wait that would pass the bound
 * ends that user's oldest open wait at once (it answers with `wait.reason = "superseded"`). A host that follows its
 * builds with one wait per project never meets the bound; a caller that opens waits in a loop
 * keeps at most `perUser` of them, and the server's slots stay free for everyone else.
 */

/** Default bound on one user's open waits, server-wide. */
export const MAX_OPEN_WAITS_PER_USER = 8;

/** Open waits per user, oldest first, at most `perUser` each. */
export class OpenWaits {
  /** Per user id, the open waits' end functions in the order they opened (a Set keeps insertion order). */
  private readonly byUser = new Map<string, Set<() => void>>();

  /** @param perUser open waits a user may hold at once (a whole number, at least 1). */
  constructor(private readonly perUser: number = MAX_OPEN_WAITS_PER_USER) {}

  /**
   * Records a wait of `userId`. When the user already holds `perUser` open waits, the oldest is
   * ended first (its `supersede` is called, and it is forgotten).
   * @param supersede ends the wait at once; called at most once, never after the returned release.
   * @returns the release: call it when the wait ends for any reason (idempotent).
   */
  enter(userId: string, supersede: () => void): () => void {
    let open = this.byUser.get(userId);
    if (!open) {
      open = new Set();
      this.byUser.set(userId, open);
    }
    while (open.size >= this.perUser) {
      const oldest = open.values().next().value!;
      open.delete(oldest);
      oldest();
    }
    open.add(supersede);
    const mine = open;
    return () => {
      mine.delete(supersede);
      if (mine.size === 0 && this.byUser.get(userId) === mine) this.byUser.delete(userId);
    };
  }
}
