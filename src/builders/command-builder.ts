/**
 * The `command` builder (design section 5): runs the operator's shell command for the workflow's
 * kind in the project's workspace (a real pipeline: `npx expo export`, `eas build`, `fastlane`),
 * streams its output into the conversation (batched, bounded), and reads a line protocol on
 * stdout (see `command-protocol.ts`). Exit status 0 completes the workflow; anything else fails
 * it. On cancel or timeout the whole process group gets SIGTERM, then SIGKILL after a grace
 * period, so no child survives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { isAbsolute, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { readJsonConfig } from '../config-file.js';
import { BuildFailure, type Builder, type BuildContext, type BuildJob } from './builder.js';
import { parseDirective, type Directive } from './command-protocol.js';
import { OutputBatcher } from './output-batcher.js';

const commandSpec = z.strictObject({
  command: z.string().min(1),
  /** Fails the workflow with `error.code = "timeout"` after this many seconds. */
  timeoutSeconds: z.number().int().positive().optional(),
});

/** The builder's config file (`--builder-config FILE`, JSON). */
export const commandBuilderConfigSchema = z.strictObject({
  build: commandSpec.optional(),
  deploy: commandSpec.optional(),
  /** Extra environment for every command (for example `EXPO_TOKEN`). */
  env: z.record(z.string(), z.string()).optional(),
  /** Milliseconds between SIGTERM and SIGKILL on cancel (default 5000). */
  killGraceMs: z.number().int().min(0).max(600_000).optional(),
  /** Output lines kept per workflow before the rest is dropped with a note (default 2000). */
  maxOutputLines: z.number().int().positive().optional(),
});
/** The validated content of a `--builder-config` file. */
export type CommandBuilderConfig = z.infer<typeof commandBuilderConfigSchema>;

/**
 * Reads and validates a command builder config file.
 * @throws Error naming the file and the first problem.
 */
export function loadCommandBuilderConfig(file: string): CommandBuilderConfig {
  const config = readJsonConfig(file, commandBuilderConfigSchema, 'builder config');
  if (!config.build && !config.deploy) throw new Error(`Invalid builder config ${file}: give a "build" or a "deploy" command`);
  return config;
}

/** Environment variables the service itself uses; never handed to an operator's command. */
const PRIVATE_ENV = ['SVC_API_TOKEN'];

/**
 * Runs the configured shell command of the workflow's kind (design section 5).
 * @throws BuildFailure `not_configured`, `command_failed`, `timeout` or `protocol_error`; the abort reason on cancel.
 */
export class CommandBuilder implements Builder {
  readonly name = 'command';

  constructor(private readonly config: CommandBuilderConfig) {}

  async run(job: BuildJob, context: BuildContext): Promise<void> {
    const spec = this.config[job.kind];
    if (!spec) throw new BuildFailure('not_configured', `This server has no ${job.kind} command configured.`);
    if (job.signal.aborted) throw job.signal.reason;

    const env: NodeJS.ProcessEnv = { ...process.env, ...this.config.env };
    for (const key of PRIVATE_ENV) delete env[key];
    Object.assign(env, {
      SVC_WORKFLOW_ID: job.workflowId,
      SVC_WORKFLOW_KIND: job.kind,
      SVC_INSTRUCTION: job.instruction,
      SVC_PROJECT_ID: job.project.id,
      SVC_PROJECT_NAME: job.project.name,
      SVC_PROJECT_DESCRIPTION: job.project.description ?? '',
      SVC_WORKSPACE: job.workspaceDir,
    });

    const child = spawn('/bin/sh', ['-c', spec.command], { cwd: job.workspaceDir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const batcher = new OutputBatcher((text) => context.say(text), { maxLines: this.config.maxOutputLines ?? 2000 });
    const graceMs = this.config.killGraceMs ?? 5000;
    let stopCause: 'abort' | 'timeout' | null = null;
    const stop = (cause: 'abort' | 'timeout') => {
      if (stopCause) return;
      stopCause = cause;
      killGroup(child, 'SIGTERM');
      setTimeout(() => killGroup(child, 'SIGKILL'), graceMs).unref();
    };
    const onAbort = () => stop('abort');
    job.signal.addEventListener('abort', onAbort, { once: true });
    const timeout = spec.timeoutSeconds ? setTimeout(() => stop('timeout'), spec.timeoutSeconds * 1000) : undefined;

    // Directives run one after another, in output order; a question blocks the ones after it.
    let chain: Promise<void> = Promise.resolve();
    let directiveError: Error | null = null;
    const onDirective = (directive: Directive) => {
      chain = chain
        .then(() => this.apply(directive, job, context, child))
        .catch((error: Error) => {
          if (job.signal.aborted) return;
          directiveError ??= error;
          stop('abort');
        });
    };
    const stdout = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    stdout.on('line', (line) => {
      const directive = parseDirective(line);
      if (directive) {
        batcher.flush();
        onDirective(directive);
      } else batcher.push(line);
    });
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', (line) => batcher.push(line));
    child.stdin!.on('error', () => undefined);

    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit, rejectExit) => {
      child.once('error', rejectExit);
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
    });
    // The shell is gone; anything it left behind in its group goes too.
    killGroup(child, 'SIGTERM');
    await waitForClose(child, 2000);
    if (timeout) clearTimeout(timeout);
    job.signal.removeEventListener('abort', onAbort);
    batcher.flush();
    await chain;

    if (job.signal.aborted) throw job.signal.reason;
    if (directiveError) throw new BuildFailure('protocol_error', (directiveError as Error).message);
    if (stopCause === 'timeout') throw new BuildFailure('timeout', `The ${job.kind} command took longer than ${spec.timeoutSeconds} s and was stopped.`);
    if (exit.code !== 0) {
      const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      throw new BuildFailure('command_failed', `The ${job.kind} command ${how}.`);
    }
  }

  private async apply(directive: Directive, job: BuildJob, context: BuildContext, child: ChildProcess): Promise<void> {
    switch (directive.type) {
      case 'step':
        context.step(directive.index, directive.total, directive.name);
        return;
      case 'result':
        context.say(directive.text, 'result');
        return;
      case 'message':
        context.say(directive.text);
        return;
      case 'artifact': {
        const dir = resolve(job.workspaceDir, directive.folder);
        const rel = relative(job.workspaceDir, dir);
        if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`Artifact folder ${directive.folder} is outside the workspace`);
        const published = await context.publish({ kind: directive.kind, platform: directive.platform, sourceDir: dir });
        context.say(`${directive.kind === 'preview' ? 'Preview' : `Deployment #${published.number}`} (${directive.platform}) published at ${published.path}.`);
        return;
      }
      case 'url': {
        await context.publish({ kind: directive.kind, platform: directive.platform, externalUrl: directive.url });
        context.say(`${directive.kind === 'preview' ? 'Preview' : 'Deployment'} (${directive.platform}): ${directive.url}`);
        return;
      }
      case 'ask': {
        const answer = await context.ask(directive.question);
        if (!child.stdin!.destroyed) child.stdin!.write(`${answer}\n`);
        return;
      }
    }
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
