/**
 * The one place a child process is started (builders' commands, toolchain installs, git, exports,
 * agents): its argv, environment, sandbox and limits come from `process-sandbox.ts`, and no other
 * file of the server spawns. Each runs in its own process group, and nothing of
 * that group outlives the run: on exit, abort and timeout the whole group gets SIGTERM, then
 * SIGKILL after a grace period (capped), and the run settles only once the group is gone.
 * Output is read with a bounded line reader, so one huge line cannot exhaust memory.
 * Every builder spawns through here (the command builder's shell command, toolchains, exports,
 * agents), so the kill rules of docs/contract.md#tokens-and-security hold for all of them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readBoundedLines, type BoundedLine } from '../io/bounded-lines.js';
import { detectBuildSandbox, sandboxLaunch, type BuildSandbox, type SandboxRequest } from './process-sandbox.js';

/** Longest grace period between SIGTERM and SIGKILL, whatever a config asks for (ms). */
export const MAX_KILL_GRACE_MS = 30_000;
/** Bytes of one output line kept in memory (the rest of the line is dropped and counted). */
const DEFAULT_MAX_LINE_BYTES = 16 * 1024;
/** How long to wait for a SIGKILLed group to disappear before giving up (ms). */
const GROUP_GONE_WAIT_MS = 5_000;

/**
 * How to run the process: what to confine (`SandboxRequest`: argv, cwd, environment additions,
 * binds, network, limits; no shell unless `file` is one) and how to watch and stop it.
 */
export interface ProcessRunOptions extends SandboxRequest {
  /** The sandbox to run in (default: bubblewrap when it works on this machine, else none). */
  sandbox?: BuildSandbox;
  /** Aborting stops the group (SIGTERM, then SIGKILL after the grace period). */
  signal?: AbortSignal;
  /** Stops the group after this many ms; the result says `stopCause: "timeout"`. */
  timeoutMs?: number;
  /** ms between SIGTERM and SIGKILL (default 5000, at most MAX_KILL_GRACE_MS). */
  killGraceMs?: number;
  /** Bytes of one output line kept (default DEFAULT_MAX_LINE_BYTES). */
  maxLineBytes?: number;
  onStdoutLine?(line: BoundedLine): void;
  onStderrLine?(line: BoundedLine): void;
  /**
   * Called with the process group id once the process has started (to record it). When its promise
   * rejects, the process is stopped and `result` rejects with that reason.
   */
  onGroupStarted?(pgid: number): Promise<void> | void;
  /** Called once the group is gone (or given up on after SIGKILL); `result` settles after it. */
  onGroupEnded?(pgid: number): Promise<void> | void;
}

/** How the run ended. */
interface ProcessResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why we stopped it, if we did. */
  stopCause: 'abort' | 'timeout' | null;
  /** Output bytes dropped from over-long lines (stdout and stderr). */
  droppedBytes: number;
}

/** A started process: its stdin, a way to stop it, and its result. */
export interface RunningProcess {
  child: ChildProcess;
  /** Writes one line to the process's stdin (ignored once stdin is closed). */
  writeLine(text: string): void;
  stop(cause: 'abort' | 'timeout'): void;
  /** Settles when the process has exited, its group is gone and its output is read. */
  result: Promise<ProcessResult>;
}

/**
 * Starts the process.
 * @throws nothing synchronously; a spawn failure (ENOENT, EACCES) rejects `result`.
 */
export function startProcess(options: ProcessRunOptions): RunningProcess {
  const graceMs = Math.min(Math.max(0, options.killGraceMs ?? 5000), MAX_KILL_GRACE_MS);
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const sandbox = options.sandbox ?? detectBuildSandbox();
  const launch = sandboxLaunch(options, sandbox);
  const term = termFor(sandbox);
  const child = spawn(launch.file, launch.args, {
    cwd: options.cwd,
    env: launch.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const pgid = child.pid;
  let trackError: unknown = null;
  if (pgid !== undefined) {
    Promise.resolve(options.onGroupStarted?.(pgid)).catch((error: unknown) => {
      trackError ??= error ?? new Error('the process group could not be recorded');
      stop('abort');
    });
  }
  child.stdin!.on('error', () => undefined);

  const output = readOutput(child, { ...options, maxLineBytes });

  let stopCause: 'abort' | 'timeout' | null = null;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (cause: 'abort' | 'timeout') => {
    if (stopCause) return;
    stopCause = cause;
    term(pgid);
    killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), graceMs);
  };
  const onAbort = () => stop('abort');
  if (options.signal?.aborted) queueMicrotask(onAbort);
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const timeout = options.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), options.timeoutMs) : undefined;

  const result = new Promise<ProcessResult>((resolve, reject) => {
    child.once('error', (error) => {
      cleanup();
      void groupEnded(pgid, options.onGroupEnded).then(() => reject(error));
    });
    child.once('exit', (code, signal) => {
      // The leader is gone; whatever it left in its group goes too, by force after the grace period.
      void endGroup(pgid, graceMs, term)
        .then(() => output.read)
        .then(() => {
          cleanup();
          return groupEnded(pgid, options.onGroupEnded);
        })
        .then(() =>
          trackError ? reject(trackError) : resolve({ code, signal, stopCause, droppedBytes: output.droppedBytes() }),
        );
    });
  });

  function cleanup() {
    if (timeout) clearTimeout(timeout);
    if (killTimer) clearTimeout(killTimer);
    options.signal?.removeEventListener('abort', onAbort);
  }

  return {
    child,
    writeLine(text: string) {
      if (!child.stdin!.destroyed && child.stdin!.writable) child.stdin!.write(`${text}\n`);
    },
    stop,
    result,
  };
}

/**
 * How the group of a process run in `sandbox` gets SIGTERM (docs/security.md "The build sandbox").
 * In the sandbox the group's leader is bwrap: SIGTERM would end it, and with it (as the PID
 * namespace's parent) everything inside at once. So SIGTERM goes to the other members only, and
 * the command gets its grace period; SIGKILL takes the whole group.
 */
function termFor(sandbox: BuildSandbox): (pgid: number | undefined) => void {
  return (pgid) => {
    if (sandbox.kind === 'bubblewrap') signalMembers(pgid, 'SIGTERM');
    else signalGroup(pgid, 'SIGTERM');
  };
}

/**
 * Reads the child's stdout and stderr with the bounded line reader, each line to its callback.
 * @param options.maxLineBytes bytes of one line kept; the rest of the line is dropped and counted.
 * @returns `read`, settled once both streams are read to their end, and `droppedBytes()`, the bytes
 *   dropped so far from over-long lines of both streams.
 */
function readOutput(
  child: ChildProcess,
  options: Pick<ProcessRunOptions, 'onStdoutLine' | 'onStderrLine'> & { maxLineBytes: number },
): { read: Promise<unknown>; droppedBytes(): number } {
  let droppedBytes = 0;
  const { maxLineBytes } = options;
  const read = Promise.all([
    readBoundedLines(child.stdout!, {
      maxLineBytes,
      onLine: (line) => ((droppedBytes += line.droppedBytes), options.onStdoutLine?.(line)),
    }),
    readBoundedLines(child.stderr!, {
      maxLineBytes,
      onLine: (line) => ((droppedBytes += line.droppedBytes), options.onStderrLine?.(line)),
    }),
  ]);
  return { read, droppedBytes: () => droppedBytes };
}

/**
 * Tells the caller (`onGroupEnded`) that group `pgid` is gone; its failure does not change the
 * outcome. Nothing to tell when the process never started (`pgid` undefined).
 */
async function groupEnded(pgid: number | undefined, onGroupEnded: ProcessRunOptions['onGroupEnded']): Promise<void> {
  if (pgid === undefined) return;
  try {
    await onGroupEnded?.(pgid);
  } catch {
    // The caller's bookkeeping (a lost lease writes nothing): the process is gone all the same.
  }
}

/** Sends `signal` to every process of group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pgid === undefined || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Ends group `pgid`: SIGTERM (through `term`, default the whole group), up to `graceMs` for it
 * to go, then SIGKILL, then a bounded wait until no process of it is left.
 * @returns true when the group is gone.
 */
export async function endGroup(
  pgid: number | undefined,
  graceMs: number,
  term: (pgid: number | undefined) => unknown = (g) => signalGroup(g, 'SIGTERM'),
): Promise<boolean> {
  if (!groupAlive(pgid)) return true;
  term(pgid);
  if (await waitGroupGone(pgid, Math.min(graceMs, MAX_KILL_GRACE_MS))) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, GROUP_GONE_WAIT_MS);
}

/** Sends `signal` to every live process of group `pgid` but its leader (`pgid` itself). */
function signalMembers(pgid: number | undefined, signal: NodeJS.Signals): void {
  if (pgid === undefined || pgid <= 1) return;
  for (const pid of groupMembers(pgid) ?? []) {
    if (pid === pgid) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/** Live (not zombie) processes of group `pgid`, from the process table (Linux). */
function groupMembers(pgid: number): number[] | null {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null; // no process table: callers assume the worst
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') found.push(Number(entry));
  }
  return found;
}

/**
 * True while a live (not zombie) process is in group `pgid`. An orphan that was killed stays a
 * zombie until the machine's init reaps it, and some container inits never do: on Linux the
 * process table tells a zombie apart; elsewhere any member counts.
 */
export function groupAlive(pgid: number | undefined): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  const members = groupMembers(pgid!);
  return members === null || members.length > 0;
}

async function waitGroupGone(pgid: number | undefined, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let pause = 5;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 100);
  }
  return true;
}
