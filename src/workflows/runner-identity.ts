/**
 * Which engine runs a workflow. A runner id is `<host>:<pid>:<nonce>`; the nonce tells a restarted
 * process apart from its predecessor when it gets the same pid (containers often do). Whether a
 * runner still holds a workflow is decided by its lease (docs/workflows.md, "Leases"); the pid is
 * only a fast path on the same host, where a dead pid means the lease can be taken at once.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process's identity as a runner. */
export interface RunnerIdentity {
  /** `<host>:<pid>:<nonce>`, stored as the workflow's `runnerId`. */
  id: string;
  /** The host part: process groups are signalled only by engines of the same host. */
  host: string;
}

/**
 * A new identity for this process. The host is `SVC_RUNNER_HOST` when set (two containers sharing
 * one data dir, or a test that plays them), else the machine's host name.
 */
export function newRunnerIdentity(host: string = process.env.SVC_RUNNER_HOST || hostname()): RunnerIdentity {
  const safeHost = host.replace(/:/g, '_');
  return { id: `${safeHost}:${process.pid}:${randomBytes(6).toString('hex')}`, host: safeHost };
}

/**
 * True when `runnerId` names a process of `self`'s host that no longer exists (or an earlier
 * process with this process's pid): its leases may be taken over without waiting for them to expire.
 */
export function isDeadOnThisHost(runnerId: string, self: RunnerIdentity): boolean {
  if (runnerId === self.id) return false;
  const [host, pidText] = runnerId.split(':');
  if (host !== self.host) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
