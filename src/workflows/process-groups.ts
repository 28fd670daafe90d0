/**
 * Signalling the process group of a build that the engine recorded (POSIX: a negative pid names a
 * process group), with the process runner's rules: every kill ends with SIGKILL after a grace
 * period for SIGTERM, and zombies do not count as alive (docs/workflows.md, "Build processes").
 */

import { readFileSync } from 'node:fs';
import { endGroup, groupAlive, signalGroup } from '../builders/process-runner.js';

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

/**
 * True while a live process of group `pgid` exists on this host. Zombies do not count: an orphan
 * that was killed stays a zombie until init reaps it, and some container inits never do.
 */
export function isGroupAlive(pgid: number): boolean {
  return groupAlive(pgid);
}

/**
 * Sends SIGTERM to group `pgid`, waits up to `graceMs` for it to end, then sends SIGKILL and waits
 * (boundedly) until the group is gone.
 * @returns true when the group is gone.
 */
export function killGroup(pgid: number, graceMs: number): Promise<boolean> {
  return endGroup(pgid, graceMs);
}

/** Sends SIGKILL to group `pgid` at once (no grace), without waiting. */
export function killGroupNow(pgid: number): void {
  signalGroup(pgid, 'SIGKILL');
}
