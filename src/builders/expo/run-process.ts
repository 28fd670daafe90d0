/**
 * The one place the `expo` builder starts child processes (npm, tsc, expo export, git, the code
 * agent). Each child runs in its own process group (so everything it starts can be stopped
 * together), its output is read line by line, and on abort or timeout the whole group gets
 * SIGTERM, then SIGKILL after a grace period. No shell is involved unless the caller runs one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What to run and how. */
export interface ProcessSpec {
  /** Executable (absolute path or a name on PATH). */
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Stops the process group when it aborts; the result then has `aborted: true`. */
  signal?: AbortSignal;
  /** Stops the process group after this many ms; the result then has `timedOut: true`. */
  timeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL (default 5000). */
  killGraceMs?: number;
  /** Called for each stdout line (lines longer than 64 KiB are cut). */
  onStdout?: (line: string) => void;
  /** Called for each stderr line. */
  onStderr?: (line: string) => void;
  /** Called once the child started, with a writer to its stdin (for answers to questions). */
  onStart?: (stdin: (text: string) => void) => void;
  /** Output lines kept for the result's `tail` (default 60). */
  tailLines?: number;
}

/** How a process ended. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last lines of stdout and stderr, interleaved in arrival order. */
  tail: string[];
}

const MAX_LINE = 64 * 1024;

/**
 * Runs a process to its end (or until stopped). Never rejects for a non-zero exit.
 * @throws Error when the executable cannot be started (ENOENT, EACCES).
 */
export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const tailMax = spec.tailLines ?? 60;
  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > tailMax) tail.shift();
  };
  if (spec.signal?.aborted) return { code: null, signal: null, timedOut: false, aborted: true, tail };

  const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const graceMs = spec.killGraceMs ?? 5000;
  let stopCause: 'abort' | 'timeout' | null = null;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (cause: 'abort' | 'timeout') => {
    if (stopCause) return;
    stopCause = cause;
    killGroup(child, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
    killTimer.unref();
  };
  const onAbort = () => stop('abort');
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = spec.timeoutMs ? setTimeout(() => stop('timeout'), spec.timeoutMs) : undefined;

  const read = (stream: NodeJS.ReadableStream, onLine?: (line: string) => void) =>
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (raw: string) => {
      const line = raw.length > MAX_LINE ? raw.slice(0, MAX_LINE) : raw;
      keep(line);
      onLine?.(line);
    });
  read(child.stdout!, spec.onStdout);
  read(child.stderr!, spec.onStderr);
  child.stdin!.on('error', () => undefined);
  spec.onStart?.((text) => {
    if (!child.stdin!.destroyed) child.stdin!.write(text);
  });

  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit, rejectExit) => {
      child.once('error', rejectExit);
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
    });
    // The leader is gone; anything it left behind in its group goes too.
    killGroup(child, 'SIGKILL');
    await waitForClose(child, 2000);
    return { ...exit, timedOut: stopCause === 'timeout', aborted: stopCause === 'abort', tail };
  } finally {
    if (timer) clearTimeout(timer);
    if (killTimer) clearTimeout(killTimer);
    spec.signal?.removeEventListener('abort', onAbort);
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

function waitForClose(child: ChildProcess, ms: number): Promise<void> {
  if (child.stdout?.closed !== false && child.stderr?.closed !== false) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    child.once('close', () => {
      clearTimeout(timer);
      done();
    });
  });
}
