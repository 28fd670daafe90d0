/**
 * A builder whose every step the test releases by hand (no sleeps): each run waits for the test
 * to tell it to report a step, ask a question, start a process group, finish or fail. The engine
 * around it is the real one, on a real SQLite file with the real migrations.
 */
import { spawn } from 'node:child_process';
import type {
  Builder,
  BuildContext,
  BuildJob,
  PublishRequest,
  PublishedArtifact,
  QuestionSpec,
} from '../src/builders/builder.js';
import { BuildFailure } from '../src/builders/builder.js';
import { processStart } from '../src/workflows/process-groups.js';

type Command =
  | { kind: 'finish' }
  | { kind: 'fail'; message: string }
  | { kind: 'step'; name: string }
  | { kind: 'ask'; spec: QuestionSpec }
  | { kind: 'publish'; request: PublishRequest }
  | { kind: 'spawn' };

/** One run of the manual builder, driven by the test. */
export class ManualRun {
  private readonly commands: Command[] = [];
  private wake: (() => void) | null = null;
  /** Answers the run received, in order. */
  readonly answers: string[] = [];
  /** Artifacts this run published, in order. */
  readonly published: PublishedArtifact[] = [];
  /** Process groups this run started (detached `sleep`). */
  readonly groups: number[] = [];
  /** Leader identity of each group when started (to never signal a reused pgid when cleaning up). */
  readonly leaders = new Map<number, string | null>();
  /** Settles when the builder's `run` returned or threw. */
  ended = false;
  error: unknown = null;
  /** True while the builder waits for the test's next command (not inside `ask`). */
  idle = false;

  constructor(
    readonly job: BuildJob,
    readonly context: BuildContext,
  ) {}

  /** Makes the builder return (the workflow completes). */
  finish(): void {
    this.push({ kind: 'finish' });
  }
  /** Makes the builder throw a BuildFailure. */
  fail(message = 'it broke'): void {
    this.push({ kind: 'fail', message });
  }
  /** Makes the builder report a step. */
  step(name: string): void {
    this.push({ kind: 'step', name });
  }
  /** Makes the builder ask a question (it waits for the answer); `extra` adds to its spec. */
  ask(key = 'q', prompt = 'Which one?', extra: Partial<QuestionSpec> = {}): void {
    this.push({ kind: 'ask', spec: { key, prompt, ...extra } });
  }
  /** Makes the builder publish an artifact (an external URL needs no files). */
  publish(request: PublishRequest): void {
    this.push({ kind: 'publish', request });
  }
  /** Makes the builder start a detached process group running `sleep 1000` and track it. */
  spawnGroup(): void {
    this.push({ kind: 'spawn' });
  }

  private push(command: Command): void {
    this.commands.push(command);
    this.wake?.();
  }

  /** The builder side: waits for commands until finish/fail or abort. */
  async drive(): Promise<void> {
    const signal = this.job.signal;
    let step = 0;
    for (;;) {
      this.idle = true;
      const command = await new Promise<Command>((resolve, reject) => {
        const next = () => {
          if (signal.aborted) return reject(signal.reason);
          const c = this.commands.shift();
          if (c) {
            this.wake = null;
            signal.removeEventListener('abort', next);
            resolve(c);
          } else this.wake = next;
        };
        signal.addEventListener('abort', next, { once: true });
        next();
      });
      this.idle = false;
      if (command.kind === 'finish') return;
      if (command.kind === 'fail') throw new BuildFailure('test_failure', command.message);
      if (command.kind === 'step') await this.context.step(++step, 9, command.name);
      if (command.kind === 'ask') this.answers.push(await this.context.ask(command.spec));
      if (command.kind === 'publish') this.published.push(await this.context.publish(command.request));
      if (command.kind === 'spawn') {
        const child = spawn('sh', ['-c', 'trap "" TERM; sleep 1000'], { detached: true, stdio: 'ignore' });
        child.unref();
        this.groups.push(child.pid!);
        this.leaders.set(child.pid!, processStart(child.pid!));
        await this.context.trackProcessGroup(child.pid!);
      }
    }
  }
}

/** The builder: registers each run so the test can find and drive it. */
export class ManualBuilder implements Builder {
  readonly name = 'manual';
  /** Every run ever started, newest last. */
  readonly runs: ManualRun[] = [];
  /** Called as each run starts, before the test can drive it. */
  onStart: ((job: BuildJob) => void) | null = null;

  async run(job: BuildJob, context: BuildContext): Promise<void> {
    this.onStart?.(job);
    const run = new ManualRun(job, context);
    this.runs.push(run);
    try {
      await run.drive();
    } catch (error) {
      run.error = error;
      throw error;
    } finally {
      run.ended = true;
    }
  }

  /** The latest run of a workflow, if it started. */
  runOf(workflowId: string): ManualRun | undefined {
    return this.runs.filter((r) => r.job.workflowId === workflowId).at(-1);
  }

  /** Runs still going. */
  live(): ManualRun[] {
    return this.runs.filter((r) => !r.ended);
  }
}
