/**
 * Signalling the process group of a build (POSIX: a negative pid names a process group). Every
 * kill ends with SIGKILL, after a grace period for SIGTERM that the engine caps
 * (docs/workflows.md, "Build processes").
 */

/** True while any process of group `pgid` exists (on this host). */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else; treat as alive (never start over it).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // Already gone.
  }
}

/**
 * Sends SIGTERM to group `pgid`, waits up to `graceMs` for it to end, then sends SIGKILL and waits
 * (up to 2 s more) until the group is gone.
 * @returns true when the group is gone.
 */
export async function killGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!isGroupAlive(pgid)) return true;
  signal(pgid, 'SIGTERM');
  if (await waitGone(pgid, graceMs)) return true;
  signal(pgid, 'SIGKILL');
  return waitGone(pgid, 2000);
}

/** Sends SIGKILL to group `pgid` at once (no grace), without waiting. */
export function killGroupNow(pgid: number): void {
  signal(pgid, 'SIGKILL');
}

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25).unref());
  }
}
