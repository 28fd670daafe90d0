/**
 * Which process runs a workflow. A runner id is `<hostname>:<pid>:<nonce>`; a runner is alive when
 * it is this process, or another process on this host whose pid still exists. The nonce tells a
 * restarted process apart from its predecessor when it gets the same pid (containers often do).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

const HOST = hostname();

/** A new runner id for this process. */
export function newRunnerId(): string {
  return `${HOST}:${process.pid}:${randomBytes(6).toString('hex')}`;
}

/** True when the process `runnerId` names may still be running workflows. */
export function isRunnerAlive(runnerId: string | null, self: string): boolean {
  if (!runnerId) return false;
  if (runnerId === self) return true;
  const [host, pidText] = runnerId.split(':');
  if (host !== HOST) return true; // cannot tell: assume alive (SQLite stores are local in practice)
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
