/**
 * The one place the `expo` builder starts child processes (npm, tsc, expo export, git, the code
 * agent), on top of the shared process runner: each child runs in its own process group, its
 * output is read in bounded lines, and on abort, timeout or exit the whole group is ended
 * (SIGTERM, then SIGKILL). No shell is involved unless the caller runs one.
 */
import type { BuildContext, BuildJob } from '../builder.js';
import type { OutputBatcher } from '../output-batcher.js';
import { startProcess, type ProcessRunOptions } from '../process-runner.js';

/** What to run and how. */
export interface ProcessSpec extends Pick<
  ProcessRunOptions,
  'env' | 'inheritEnv' | 'binds' | 'network' | 'limits' | 'sandbox'
> {
  /** Executable (absolute path or a name on PATH). */
  command: string;
  args: string[];
  cwd: string;
  /** Stops the process group when it aborts; the result then has `aborted: true`. */
  signal?: AbortSignal;
  /** Stops the process group after this many ms; the result then has `timedOut: true`. */
  timeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL (default 5000). */
  killGraceMs?: number;
  /** Called for each stdout line (long lines are cut by the runner). */
  onStdout?: (line: string) => void;
  /** Called for each stderr line. */
  onStderr?: (line: string) => void;
  /** Called once the child started, with a writer of one line to its stdin (answers to questions). */
  onStart?: (writeLine: (text: string) => void) => void;
  /** Called with the process group id when it starts and when it is gone (to record it; see `ProcessRunOptions`). */
  onGroupStarted?: (pgid: number) => Promise<void> | void;
  onGroupEnded?: (pgid: number) => Promise<void> | void;
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

/**
 * Runs a process to its end (or until stopped) and until its group is gone. Never rejects for a
 * non-zero exit.
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
  const running = startProcess({
    file: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    ...(spec.env && { env: spec.env }),
    ...(spec.inheritEnv && { inheritEnv: spec.inheritEnv }),
    ...(spec.binds && { binds: spec.binds }),
    ...(spec.network !== undefined && { network: spec.network }),
    ...(spec.limits && { limits: spec.limits }),
    ...(spec.sandbox && { sandbox: spec.sandbox }),
    ...(spec.signal && { signal: spec.signal }),
    ...(spec.timeoutMs !== undefined && { timeoutMs: spec.timeoutMs }),
    ...(spec.killGraceMs !== undefined && { killGraceMs: spec.killGraceMs }),
    onStdoutLine: (line) => {
      keep(line.text);
      spec.onStdout?.(line.text);
    },
    onStderrLine: (line) => {
      keep(line.text);
      spec.onStderr?.(line.text);
    },
    ...(spec.onGroupStarted && { onGroupStarted: spec.onGroupStarted }),
    ...(spec.onGroupEnded && { onGroupEnded: spec.onGroupEnded }),
  });
  spec.onStart?.((text) => running.writeLine(text));
  const result = await running.result;
  return {
    code: result.code,
    signal: result.signal,
    timedOut: result.stopCause === 'timeout',
    aborted: result.stopCause === 'abort',
    tail,
  };
}

/** Hooks that record a child's process group with the workflow (so a restart can end an orphan). */
export function groupHooks(context: BuildContext): Pick<ProcessSpec, 'onGroupStarted' | 'onGroupEnded'> {
  return {
    onGroupStarted: (pgid) => context.trackProcessGroup?.(pgid),
    onGroupEnded: (pgid) => context.untrackProcessGroup?.(pgid),
  };
}

/** The project's plain `EXPO_PUBLIC_*` variables, which Expo inlines into the app (docs/security.md "Project environment"). */
export function expoPublicOf(job: BuildJob): Record<string, string> {
  return Object.fromEntries(Object.entries(job.env?.plain ?? {}).filter(([name]) => name.startsWith('EXPO_PUBLIC_')));
}

/** Posts a child's non-blank output line to `output` (Metro pads its report with empty ones). */
export function pushLine(output: OutputBatcher, line: string): void {
  if (line.trim()) output.push(line);
}
