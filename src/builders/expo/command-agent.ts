/**
 * The `command` agent: an operator's code agent (`--agent-command`, a shell command line) run in
 * the project's workspace. It reads the instruction and the project from its environment:
 *
 * | variable | value |
 * |---|---|
 * | `SVC_INSTRUCTION` | the user's instruction for this build |
 * | `SVC_PROJECT_ID`, `SVC_PROJECT_NAME`, `SVC_PROJECT_DESCRIPTION` | the project |
 * | `SVC_HISTORY_FILE` | a JSON file: `{"instructions": [earlier instructions, oldest first]}` |
 * | `SVC_WORKSPACE` | the workspace (also the working directory) |
 * | `SVC_EXPO_SDK` | the Expo SDK of the workspace (`58`): previews and type checks use it |
 * | `SVC_EXPO_SDKS` | every SDK a deploy exports for, the workspace's first (`58,54`): the code must build with each |
 *
 * Its output becomes progress messages; a `::ask key {"prompt": ...}` line asks the user and the
 * answer arrives on its stdin as one line, `::message text` and `::result text` post messages (the
 * command builder's line protocol). Exit 0 means done; the build then type-checks and exports.
 * It is stopped with its whole process group on cancel and after the timeout.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildFailure, reportInBackground, type BuildContext, type BuildJob } from '../builder.js';
import { parseDirective, type Directive } from '../command-protocol.js';
import { OutputBatcher } from '../output-batcher.js';
import type { AgentInput, AgentOutcome, AgentStep } from './agent-step.js';
import { pathRedactor } from '../output-redaction.js';
import { pathsNamedIn, type BuildSandbox } from '../process-sandbox.js';
import { groupHooks, runProcess, type ProcessResult } from './run-process.js';
import { OUTPUT_DIR } from './workspace.js';

/** Settings of the `command` agent. */
export interface CommandAgentOptions {
  /** The shell command line (run with `/bin/sh -c`). */
  command: string;
  /** Stops the agent after this many ms (default 15 min); the build fails with `timeout`. */
  timeoutMs?: number;
  /** Output lines kept per run (default 2000). */
  maxOutputLines?: number;
  /** Extra environment (for the agent's own credentials). */
  env?: Record<string, string>;
  /** Where the agent runs (default: bubblewrap when it works here). */
  sandbox?: BuildSandbox;
  /** Let the agent reach the network (a hosted model's API); default false. */
  network?: boolean;
  /** Folders of the machine the agent may read (its own install), besides the system folders. */
  readOnlyPaths?: string[];
}

/** The `command` agent (see the file comment). */
export class CommandAgent implements AgentStep {
  readonly mode = 'command' as const;
  readonly stepName = 'Running the code agent';

  constructor(private readonly options: CommandAgentOptions) {}

  async run(input: AgentInput): Promise<AgentOutcome> {
    const { job, context, workspace, sdk, toolchains } = input;
    const historyFile = await writeHistoryFile(workspace.dir, job);
    const env = agentEnv({ extra: this.options.env, job, workspaceDir: workspace.dir, historyFile, sdk, toolchains });

    const redact = pathRedactor(job.workspaceDir);
    const batcher = new OutputBatcher((text) => reportInBackground(context.say(redact(text))), {
      maxLines: this.options.maxOutputLines ?? 2000,
    });
    let writeStdin: (text: string) => void = () => undefined;
    let chain: Promise<void> = Promise.resolve();
    let directiveError: Error | null = null;
    const controller = new AbortController();
    const onAbort = () => controller.abort(job.signal.reason);
    job.signal.addEventListener('abort', onAbort, { once: true });
    let lastResult = '';
    const apply = async (directive: Directive, ctx: BuildContext) => {
      if (directive.type === 'ask') writeStdin(await ctx.ask(directive.question));
      else if (directive.type === 'message') await ctx.say(redact(directive.text));
      else if (directive.type === 'result') {
        lastResult = redact(directive.text);
        await ctx.say(lastResult);
      } else batcher.push(`(ignored directive ${directive.type}: the expo builder publishes previews itself)`);
    };
    const timeoutMs = this.options.timeoutMs ?? 15 * 60_000;
    try {
      const result = await runProcess({
        command: '/bin/sh',
        args: ['-c', this.options.command],
        cwd: workspace.dir,
        env,
        binds: {
          rw: [workspace.dir],
          ro: [input.toolchain.dir, ...pathsNamedIn(this.options.command), ...(this.options.readOnlyPaths ?? [])],
        },
        network: this.options.network === true,
        ...(this.options.sandbox && { sandbox: this.options.sandbox }),
        signal: controller.signal,
        timeoutMs,
        onStart: (write) => (writeStdin = write),
        onStdout: (line) => {
          const directive = parseDirective(line);
          if (!directive) return batcher.push(line);
          batcher.flush();
          // Directives run in output order; a question blocks the ones after it.
          chain = chain
            .then(() => apply(directive, context))
            .catch((error: Error) => {
              if (job.signal.aborted) return;
              directiveError ??= error;
              controller.abort(error);
            });
        },
        onStderr: (line) => batcher.push(line),
        ...groupHooks(context),
      });
      batcher.flush();
      await chain;
      if (job.signal.aborted) throw job.signal.reason;
      const failure = agentFailure({ directiveError: directiveError as Error | null, result, timeoutMs });
      if (failure) throw failure;
      return { summary: lastResult || 'changes by the code agent' };
    } finally {
      job.signal.removeEventListener('abort', onAbort);
      batcher.flush();
    }
  }
}

/**
 * Writes the agent's history file, `<workspace>/<OUTPUT_DIR>/history.json`: `{"instructions":
 * [earlier instructions, oldest first], "instruction": this build's}` (see the file comment).
 * @returns the file's absolute path (the agent's `SVC_HISTORY_FILE`).
 */
async function writeHistoryFile(workspaceDir: string, job: BuildJob): Promise<string> {
  const historyFile = join(workspaceDir, OUTPUT_DIR, 'history.json');
  await mkdir(join(workspaceDir, OUTPUT_DIR), { recursive: true });
  await writeFile(
    historyFile,
    `${JSON.stringify({ instructions: job.history, instruction: job.instruction }, null, 2)}\n`,
  );
  return historyFile;
}

/**
 * The agent's whole environment (docs/security.md "The build sandbox"), built from nothing: the
 * operator's `extra` variables, the project's variables and secrets (docs/security.md "Project
 * environment"), then the SVC_* variables of the file comment and EXPO_NO_TELEMETRY.
 * The server's environment (its SVC_* settings, SVC_API_TOKEN) never passes.
 */
function agentEnv(options: {
  extra: Record<string, string> | undefined;
  job: BuildJob;
  /** The workspace (absolute), also the agent's working directory. */
  workspaceDir: string;
  /** Absolute path written by `writeHistoryFile`. */
  historyFile: string;
  /** The workspace's Expo SDK (`58`). */
  sdk: number;
  /** Every served SDK's toolchain, the workspace's first. */
  toolchains: AgentInput['toolchains'];
}): Record<string, string> {
  const { job } = options;
  const env: Record<string, string> = { ...options.extra, ...job.env?.plain, ...job.env?.secrets };
  Object.assign(env, {
    SVC_WORKFLOW_ID: job.workflowId,
    SVC_INSTRUCTION: job.instruction,
    SVC_PROJECT_ID: job.project.id,
    SVC_PROJECT_NAME: job.project.name,
    SVC_PROJECT_DESCRIPTION: job.project.description ?? '',
    SVC_HISTORY_FILE: options.historyFile,
    SVC_WORKSPACE: options.workspaceDir,
    SVC_EXPO_SDK: String(options.sdk),
    SVC_EXPO_SDKS: options.toolchains.map((t) => t.sdk).join(','),
    EXPO_NO_TELEMETRY: '1',
  });
  return env;
}

/**
 * How a finished agent run fails the build (docs/builders.md), or null when it succeeded, checked
 * in this order: a directive that failed, the timeout (`timeoutMs`, named in whole seconds), then a
 * non-zero exit or a killing signal (with the last 10 lines of its output).
 * @returns BuildFailure `agent_failed` or `timeout`.
 */
function agentFailure(options: {
  directiveError: Error | null;
  result: ProcessResult;
  timeoutMs: number;
}): BuildFailure | null {
  const { directiveError, result } = options;
  if (directiveError)
    return new BuildFailure('agent_failed', `The code agent's directive failed: ${directiveError.message}`);
  if (result.timedOut)
    return new BuildFailure(
      'timeout',
      `The code agent took longer than ${Math.round(options.timeoutMs / 1000)} s and was stopped.`,
    );
  if (result.code === 0) return null;
  const how = result.code === null ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
  return new BuildFailure(
    'agent_failed',
    `The code agent ${how}. Its last output:\n${result.tail.slice(-10).join('\n')}`,
  );
}
