/**
 * Signalling the process group of a build (POSIX: a negative pid names a process group). Every
 * kill ends with SIGKILL, after a grace period for SIGTERM that the engine caps
 * (docs/workflows.md, "Build processes").
 */

import { readFileSync } from 'node:fs';

let bootId: string | null | undefined;

/**
 * Identity of the process `pid` as `<boot id>:<start time in clock ticks>` (Linux `/proc`), or null
 * when it does not exist or cannot be read. Two processes with the same pid never share it.
 */
export function processStart(pid: number): string | null {
  try {
    bootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${bootId}:${fields[19]}`;
  } catch {
    return null;
  }
}

/**
 * True when group `pgid`, recorded with leader identity `leaderStart`, may be another group now:
 * its leader lives under a different identity. (While any member of a group lives, the kernel does
 * not hand its id to a new process, so a group whose leader is gone is still the recorded one.)
 */
export function isReusedGroup(pgid: number, leaderStart: string | null): boolean {
  if (leaderStart === null) return false;
  const now = processStart(pgid);
  return now !== null && now !== leaderStart;
}

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
