/**
 * The `command` builder (docs/builders.md#builders): runs the operator's shell command for the workflow's
 * kind in the project's workspace (a real pipeline: `npx expo export`, `eas build`, `fastlane`),
 * streams its output into the conversation (batched, bounded), and reads a line protocol on
 * stdout (see `command-protocol.ts`). Exit status 0 completes the workflow; anything else fails
 * it. On cancel or timeout the whole process group gets SIGTERM, then SIGKILL after a grace
 * period, so no child survives.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { readJsonConfig } from '../config-file.js';
import { BuildFailure, reportInBackground, type Builder, type BuildContext, type BuildJob } from './builder.js';
import { parseDirective, type Directive } from './command-protocol.js';
import type { BoundedLine } from '../io/bounded-lines.js';
import { OutputBatcher } from './output-batcher.js';
import { pathRedactor } from './output-redaction.js';
import { MAX_KILL_GRACE_MS, startProcess, type RunningProcess } from './process-runner.js';
import { pathsNamedIn, type BuildSandbox } from './process-sandbox.js';
import { updateDescriptionProblem } from './update-description.js';

/** Output lines (directives included) kept per workflow unless the config says otherwise. */
const DEFAULT_MAX_OUTPUT_LINES = 2000;
/** Previews and deployments one workflow may publish. */
const MAX_ARTIFACTS_PER_WORKFLOW = 20;

const commandSpec = z.strictObject({
  command: z.string().min(1),
  /** Fails the workflow with `error.code = "timeout"` after this many seconds. */
  timeoutSeconds: z.number().int().positive().optional(),
});

/** The builder's config file (`--builder-config FILE`, JSON). */
const commandBuilderConfigSchema = z.strictObject({
  build: commandSpec.optional(),
  deploy: commandSpec.optional(),
  /** Extra environment for every command (for example `EXPO_TOKEN`). */
  env: z.record(z.string(), z.string()).optional(),
  /** Milliseconds between SIGTERM and SIGKILL on cancel (default 5000, at most 30 000). */
  killGraceMs: z.number().int().min(0).max(MAX_KILL_GRACE_MS).optional(),
  /** Output lines kept per workflow before the rest is dropped with a note (default 2000). */
  maxOutputLines: z.number().int().positive().optional(),
  /** What the command may reach in its sandbox besides the workspace (docs/security.md "The build sandbox"). */
  sandbox: z
    .strictObject({
      /** Let the command reach the network (`eas build`, uploads); default false. */
      network: z.boolean().optional(),
      /** Absolute folders of the machine the command may read (its tools outside /usr). */
      readOnlyPaths: z.array(z.string().startsWith('/')).optional(),
      /** Names of the server's environment passed to the command (never SVC_*). */
      inheritEnv: z
        .array(z.string().regex(/^(?!SVC_)[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name not starting with SVC_'))
        .optional(),
    })
    .optional(),
});
/** The validated content of a `--builder-config` file. */
export type CommandBuilderConfig = z.infer<typeof commandBuilderConfigSchema>;

/**
 * Reads and validates a command builder config file.
 * @throws Error naming the file and the first problem.
 */
export function loadCommandBuilderConfig(file: string): CommandBuilderConfig {
  const config = readJsonConfig(file, commandBuilderConfigSchema, 'builder config');
  if (!config.build && !config.deploy)
    throw new Error(`Invalid builder config ${file}: give a "build" or a "deploy" command`);
  return config;
}

/**
 * Runs the configured shell command of the workflow's kind (docs/builders.md#builders).
 * @throws BuildFailure `not_configured`, `command_failed`, `timeout` or `protocol_error`; the abort reason on cancel.
 */
export class CommandBuilder implements Builder {
  readonly name = 'command';

  /** @param sandbox where commands run (default: bubblewrap when it works here). */
  constructor(
    private readonly config: CommandBuilderConfig,
    private readonly sandbox?: BuildSandbox,
  ) {}

  async run(job: BuildJob, context: BuildContext): Promise<void> {
    const spec = this.config[job.kind];
    if (!spec) throw new BuildFailure('not_configured', `This server has no ${job.kind} command configured.`);
    if (job.signal.aborted) throw job.signal.reason;

    const env = commandEnv(this.config.env, job);

    const redact = pathRedactor(job.workspaceDir);
    const say = (text: string) => reportInBackground(context.say(redact(text)));
    const batcher = new OutputBatcher(say, { maxLines: this.config.maxOutputLines ?? DEFAULT_MAX_OUTPUT_LINES });
    // Directives run one after another, in output order; a question blocks the ones after it.
    let chain: Promise<void> = Promise.resolve();
    let directiveError: Error | null = null;
    let published = 0;
    const onStdout = ({ text, droppedBytes }: BoundedLine) => {
      const directive = droppedBytes === 0 ? parseDirective(text) : null;
      if (!directive) return batcher.push(text, droppedBytes);
      // Directives count against the output cap like any line; a question is always relayed,
      // since the command waits for its answer.
      if (directive.type !== 'ask' && !batcher.count()) return;
      if (directive.type === 'artifact' || directive.type === 'url') {
        if (++published > MAX_ARTIFACTS_PER_WORKFLOW) {
          directiveError ??= new Error(
            `A workflow may publish at most ${MAX_ARTIFACTS_PER_WORKFLOW} previews and deployments.`,
          );
          running.stop('abort');
          return;
        }
      }
      batcher.flush();
      chain = chain
        .then(() => this.apply(directive, job, context, running))
        .catch((error: Error) => {
          if (job.signal.aborted) return;
          directiveError ??= error;
          running.stop('abort');
        });
    };
    const running = startProcess({
      file: '/bin/sh',
      args: ['-c', spec.command],
      cwd: job.workspaceDir,
      env,
      binds: {
        rw: [job.workspaceDir],
        ro: [...pathsNamedIn(spec.command), ...(this.config.sandbox?.readOnlyPaths ?? [])],
      },
      network: this.config.sandbox?.network === true,
      ...(this.config.sandbox?.inheritEnv && { inheritEnv: this.config.sandbox.inheritEnv }),
      ...(this.sandbox && { sandbox: this.sandbox }),
      signal: job.signal,
      ...(spec.timeoutSeconds !== undefined && { timeoutMs: spec.timeoutSeconds * 1000 }),
      killGraceMs: this.config.killGraceMs ?? 5000,
      onStdoutLine: onStdout,
      onStderrLine: ({ text, droppedBytes }) => batcher.push(text, droppedBytes),
      onGroupStarted: (pgid) => context.trackProcessGroup?.(pgid),
      onGroupEnded: (pgid) => context.untrackProcessGroup?.(pgid),
    });
    const exit = await running.result;
    batcher.flush();
    await chain;
    batcher.close();

    if (job.signal.aborted) throw job.signal.reason;
    // Assigned in callbacks, which the compiler cannot follow.
    const failure = directiveError as Error | null;
    if (failure) throw failure instanceof BuildFailure ? failure : new BuildFailure('protocol_error', failure.message);
    const exitProblem = exitFailure(job.kind, spec.timeoutSeconds, exit);
    if (exitProblem) throw exitProblem;
  }

  private async apply(
    directive: Directive,
    job: BuildJob,
    context: BuildContext,
    running: RunningProcess,
  ): Promise<void> {
    switch (directive.type) {
      case 'step':
        await context.step(directive.index, directive.total, directive.name);
        return;
      case 'result':
        await context.say(pathRedactor(job.workspaceDir)(directive.text), 'result');
        return;
      case 'message':
        await context.say(pathRedactor(job.workspaceDir)(directive.text));
        return;
      case 'artifact': {
        const dir = await insideWorkspace(job.workspaceDir, directive.folder);
        // A native deployment's update description is served as a manifest: checked before it is published.
        const problem =
          directive.kind === 'deployment' && directive.platform !== 'web' ? await updateDescriptionProblem(dir) : null;
        if (problem)
          throw new BuildFailure(
            'invalid_update',
            `The deployment in ${directive.folder} was not published: ${problem}.`,
          );
        const published = await context.publish({ kind: directive.kind, platform: directive.platform, sourceDir: dir });
        await context.say(
          `${directive.kind === 'preview' ? `Preview (${directive.platform})` : `Deploy #${published.number}: ${directive.platform}`} published at ${published.path}.`,
        );
        return;
      }
      case 'url': {
        await context.publish({ kind: directive.kind, platform: directive.platform, externalUrl: directive.url });
        await context.say(
          `${directive.kind === 'preview' ? 'Preview' : 'Deployment'} (${directive.platform}): ${directive.url}`,
        );
        return;
      }
      case 'ask': {
        running.writeLine(await context.ask(directive.question));
        return;
      }
    }
  }
}

/**
 * The command's whole environment (docs/security.md "The build sandbox"), built from nothing: the
 * config's `env`, then the project's variables and secrets (docs/security.md "Project environment"),
 * then the job's SVC_* variables (workflow, instruction, project, workspace path).
 * The server's own environment (its SVC_* settings, SVC_API_TOKEN) never reaches the command.
 */
function commandEnv(configEnv: Record<string, string> | undefined, job: BuildJob): Record<string, string> {
  const env: Record<string, string> = { ...configEnv, ...job.env?.plain, ...job.env?.secrets };
  Object.assign(env, {
    SVC_WORKFLOW_ID: job.workflowId,
    SVC_WORKFLOW_KIND: job.kind,
    SVC_INSTRUCTION: job.instruction,
    SVC_PROJECT_ID: job.project.id,
    SVC_PROJECT_NAME: job.project.name,
    SVC_PROJECT_DESCRIPTION: job.project.description ?? '',
    SVC_WORKSPACE: job.workspaceDir,
  });
  return env;
}

/**
 * How the exit of the workflow's command fails the workflow (docs/builders.md#builders), or null
 * for exit status 0.
 * @param timeoutSeconds the command's configured limit, named in the `timeout` message.
 * @returns BuildFailure `timeout` when the limit stopped it, `command_failed` for a non-zero exit
 *   code or a killing signal.
 */
function exitFailure(
  kind: BuildJob['kind'],
  timeoutSeconds: number | undefined,
  exit: { code: number | null; signal: NodeJS.Signals | null; stopCause: 'abort' | 'timeout' | null },
): BuildFailure | null {
  if (exit.stopCause === 'timeout')
    return new BuildFailure('timeout', `The ${kind} command took longer than ${timeoutSeconds} s and was stopped.`);
  if (exit.code === 0) return null;
  const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return new BuildFailure('command_failed', `The ${kind} command ${how}.`);
}

/**
 * The real path of workspace folder `folder`, checked to be inside the workspace after every
 * link is resolved (a `dist -> /etc` link is refused, not followed).
 * @throws Error naming the folder as the command gave it (never an absolute server path).
 */
async function insideWorkspace(workspaceDir: string, folder: string): Promise<string> {
  const root = await realpath(workspaceDir);
  const dir = await realpath(resolve(root, folder)).catch(() => null);
  if (!dir) throw new Error(`Artifact folder ${folder} does not exist`);
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`Artifact folder ${folder} is outside the workspace`);
  return dir;
}
