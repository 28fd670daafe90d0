/**
 * What keeps a host's call alive while `svc_get_session` waits (README "Waits and host timeouts"):
 * the longest a wait runs, however long the caller asked for, and the progress notification it
 * sends at least every `WAIT_HEARTBEAT_MS` naming the followed step and how long it has run.
 * Hosts cut a call whose request shows no sign of life (the MCP SDK's client after 60 s unless a
 * progress notification resets its timer, claude.ai at about 60 s whatever it receives): a wait of
 * at most 45 s, with a notification every 10 s, answers within both.
 */

/** The longest a session wait runs, in seconds: a longer `waitSeconds` is answered at this bound. */
export const WAIT_CAP_SECONDS = 45;

/** A waiting call with a progress token hears from the server at least this often, in ms. */
export const WAIT_HEARTBEAT_MS = 10_000;

/** Bound on the steps remembered at once (one per followed workflow; the oldest go first). */
const REMEMBERED_STEPS = 1000;

/**
 * When this process first saw each followed workflow at its current status and step, so that a
 * heartbeat can say how long the step has run, across the successive waits that follow it.
 */
export class StepClock {
  /** Per workflow id: the status and step it was seen at, and since when (ms since the epoch). */
  private readonly seen = new Map<string, { mark: string; since: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Whole seconds since `workflowId` was first seen at `mark` (its status and step, any string
   * that changes with them); a new mark starts the count again at 0.
   */
  secondsAt(workflowId: string, mark: string): number {
    const now = this.now();
    let entry = this.seen.get(workflowId);
    if (entry?.mark !== mark) {
      entry = { mark, since: now };
      this.seen.delete(workflowId);
      this.seen.set(workflowId, entry);
      if (this.seen.size > REMEMBERED_STEPS) this.seen.delete(this.seen.keys().next().value!);
    }
    return Math.max(0, Math.floor((now - entry.since) / 1000));
  }
}

/**
 * Calls `beat` every `everyMs` until the returned stop function is called (idempotent). The timer
 * does not hold the process open.
 */
export function startHeartbeat(beat: () => void, everyMs: number = WAIT_HEARTBEAT_MS): () => void {
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
