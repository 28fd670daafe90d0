/**
 * The engine's implementation of a builder's `BuildContext` (src/builders/builder.ts): every report
 * is written to the store (with its conversation message) before the call returns, and every
 * write is a compare-and-set on the runner that holds the workflow's lease, so that a runner that
 * lost its lease writes nothing more (docs/workflows.md, "Leases").
 */
import { randomUUID } from 'node:crypto';
import type { BuildContext, Platform, PublishedArtifact, PublishRequest, QuestionSpec } from '../builders/builder.js';
import type { Logger } from '../logger.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import { questionKind } from '../builders/builder-registry.js';
import { BuildFailure } from '../builders/builder.js';
import { secretRedactor } from '../builders/output-redaction.js';
import { findSecretIn } from '../io/secret-scan.js';
import { toPublished, type ArtifactPublisher } from './artifact-publisher.js';
import { LeaseLostError, type LocalRun } from './local-run.js';
import { killGroupNow, processStart } from './process-groups.js';
import type { RunnerIdentity } from './runner-identity.js';
import type { NewMessage, WorkflowJournal } from './workflow-journal.js';
import { ReleasePublication } from './release-recorder.js';

/** What a build context writes through. */
export interface BuildContextDeps {
  store: Store;
  journal: WorkflowJournal;
  publisher: ArtifactPublisher;
  runner: RunnerIdentity;
  /** The project's workspace: a code question's paths are stored relative to it. */
  workspaceDir: string;
  logger: Logger;
  /** Called (once per run is enough) when a write finds that this runner lost the lease. */
  onLeaseLost(run: LocalRun): void;
  /**
   * The project's secrets, by name (docs/security.md "Project environment"): taken out of every
   * message and question, and a folder that holds one is never published. None when absent.
   */
  secrets?: Readonly<Record<string, string>>;
}

/** The context one run of a builder reports through. */
export class EngineBuildContext implements BuildContext {
  /** The release the run's first deployment fixed, announced when the run ends well. */
  private release: ReleasePublication | null = null;
  /** Replaces the project's secrets in a text (`secretRedactor`). */
  private readonly redact: (text: string) => string;

  constructor(
    private readonly workflow: WorkflowRow,
    private readonly run: LocalRun,
    private readonly deps: BuildContextDeps,
  ) {
    this.redact = secretRedactor(deps.secrets ?? {});
  }

  async step(index: number, total: number, name: string): Promise<void> {
    await this.held(async (tx) => {
      await tx.workflows.updateHeld(this.workflow.id, this.deps.runner.id, {
        stepIndex: index,
        stepTotal: total,
        stepName: name,
      });
      await this.post(tx, { role: 'agent', type: 'progress', content: `Step ${index}/${total}: ${name}` });
    });
  }

  async say(content: string, type: 'progress' | 'result' = 'progress'): Promise<void> {
    await this.held((tx) => this.post(tx, { role: 'agent', type, content }));
  }

  async recall(key: string): Promise<string | null> {
    return (await this.deps.store.repos.questions.latestAnswer(this.workflow.projectId, key)) ?? null;
  }

  async ask(spec: QuestionSpec): Promise<string> {
    const signal = this.run.controller.signal;
    if (signal.aborted) throw signal.reason;
    const { journal, runner } = this.deps;
    const { questions, workflows } = this.deps.store.repos;
    const earlier = await questions.findByKey(this.workflow.id, spec.key);
    if (earlier?.answer != null) return earlier.answer;

    const rules = spec.rules ? JSON.stringify(storedRules(spec.kind, spec.rules, this.deps.workspaceDir)) : null;
    // The files the question shows, read now (the workspace does not change while it waits) and
    // stored with it, so that every node serves the same pages (docs/workflows.md "Where answers are checked").
    const filePages =
      earlier || !spec.kind ? null : await questionKind(spec.kind)?.filePages?.(rules, this.deps.workspaceDir);
    const question =
      earlier ??
      (await this.held(async (tx) => {
        const row = {
          id: randomUUID(),
          workflowId: this.workflow.id,
          projectId: this.workflow.projectId,
          key: spec.key,
          prompt: this.redact(spec.prompt),
          options: spec.options ? JSON.stringify(spec.options.map(this.redact)) : null,
          pattern: spec.pattern ?? null,
          kind: spec.kind ?? 'text',
          format: spec.format ? JSON.stringify(spec.format) : null,
          maxLength: spec.maxLength ?? null,
          rules,
          askedAt: journal.now(),
          answer: null,
          answeredAt: null,
        };
        await tx.questions.insert(row);
        if (filePages) await tx.questions.saveFilePages(row.id, JSON.stringify(filePages));
        return row;
      }));

    const answer = new Promise<string>((resolve, reject) => {
      this.run.waiting = {
        questionId: question.id,
        resolve: (answer) => {
          this.run.waiting = null;
          resolve(answer);
        },
        reject: (reason) => {
          this.run.waiting = null;
          reject(reason);
        },
      };
    });
    {
      const options = spec.options?.length ? ` Options: ${spec.options.map(this.redact).join(', ')}.` : '';
      // A code question's prompt carries the app's files: the conversation shows its head only.
      const content = this.redact(
        spec.kind === 'code'
          ? shortened(spec.prompt, 1500, 'the whole task is in pendingQuestion.prompt of svc_get_session')
          : `${spec.prompt}${options}`,
      );
      const moved = await journal.transition(this.workflow, 'running', 'ask', {
        message: { role: 'agent', type: 'question', content },
        owner: runner.id,
      });
      if (!moved) {
        // Cancelled between the builder's last step and this question, answered already, or lost.
        const current = await workflows.findById(this.workflow.id);
        const answered = await questions.findById(question.id);
        const waiting = this.run.waiting as LocalRun['waiting'];
        if (current?.runnerId !== runner.id) {
          // The answer promise is dropped unsettled: this call rejects instead.
          this.run.waiting = null;
          this.leaseLost();
        } else if (answered?.answer != null) waiting?.resolve(answered.answer);
        else if (current?.status !== 'waiting_for_input') waiting?.reject('cancel');
      }
    }
    return answer;
  }

  async publish(request: PublishRequest): Promise<PublishedArtifact> {
    if (this.run.lost) throw new LeaseLostError(this.workflow.id);
    if ('sourceDir' in request) await this.refuseSecrets(request.sourceDir);
    // A deployment is part of the workflow's release (docs/releases.md).
    const release =
      request.kind === 'deployment'
        ? await ReleasePublication.prepare(
            this.deps.store.repos,
            this.workflow,
            this.deps.workspaceDir,
            request,
            this.redact,
          )
        : null;
    // The row is recorded only while this runner holds the workflow.
    const { published, refused } = await this.deps.publisher.publish(
      this.workflow.projectId,
      this.workflow.id,
      request,
      (tx) => this.heldIn(tx),
      release ? (tx, row) => release.record(tx, row) : undefined,
    );
    if (release?.announces) this.release = release;
    if (refused.length > 0) {
      const shown = refused.slice(0, 10).join(', ');
      const more = refused.length > 10 ? ` and ${refused.length - 10} more` : '';
      await this.say(`Not published (links that leave the published folder, or not regular files): ${shown}${more}.`);
    }
    return published;
  }

  /**
   * Posts the release's result message (`ReleasePublication.note`: number, channel, rollout,
   * changes, the channel's latest URL), when the run published a deployment; call it after the
   * builder returned, so it closes the conversation of the deploy.
   */
  async announceRelease(): Promise<void> {
    if (this.release) await this.say(this.release.note(await this.updateChannelToken()), 'result');
  }

  async latestPreview(platform: Platform): Promise<PublishedArtifact | null> {
    const row = await this.deps.store.repos.artifacts.latest(this.workflow.projectId, 'preview', platform);
    return row ? toPublished(row) : null;
  }

  updateChannelToken(): Promise<string> {
    return this.deps.store.repos.updateChannels.tokenOf(this.workflow.projectId);
  }

  async trackProcessGroup(pgid: number): Promise<void> {
    if (!Number.isInteger(pgid) || pgid <= 1) throw new Error(`Not a process group id: ${pgid}`);
    const leaderStart = processStart(pgid);
    this.run.groups.set(pgid, leaderStart);
    try {
      await this.held((tx) =>
        tx.processGroups.insert({
          host: this.deps.runner.host,
          pgid,
          leaderStart,
          workflowId: this.workflow.id,
          projectId: this.workflow.projectId,
          runnerId: this.deps.runner.id,
          createdAt: this.deps.journal.now(),
        }),
      );
    } catch (error) {
      // Not ours any more: the group must not outlive the workflow.
      killGroupNow(pgid);
      throw error;
    }
  }

  async untrackProcessGroup(pgid: number): Promise<void> {
    this.run.groups.delete(pgid);
    // Only while this runner still holds the workflow: a runner that lost its lease writes
    // nothing, and the one that took over sweeps the row once the group is gone.
    if (this.run.lost) return;
    await this.deps.store.transaction(async (tx) => {
      await tx.lock('projects', this.workflow.projectId);
      await tx.lock('workflows', this.workflow.id);
      if (await tx.workflows.isHeldBy(this.workflow.id, this.deps.runner.id))
        await tx.processGroups.remove(this.deps.runner.host, pgid);
    });
  }

  private async post(tx: Tx, message: NewMessage): Promise<void> {
    const content = this.redact(message.content);
    await this.deps.journal.post(this.workflow.projectId, this.workflow.id, { ...message, content }, tx);
  }

  /**
   * @throws BuildFailure `secret_in_artifact` when a file of `dir` holds one of the project's secrets
   *   (named, with the file): nothing is published
   */
  private async refuseSecrets(dir: string): Promise<void> {
    const found = await findSecretIn(dir, this.deps.secrets ?? {});
    if (found)
      throw new BuildFailure(
        'secret_in_artifact',
        `The file ${found.file} to publish holds the value of the secret ${found.name}: nothing was published. Secrets exist only in the build's environment; read them there, never write them into the app.`,
      );
  }

  /**
   * Runs `write` in one write transaction that first checks this runner still holds the workflow.
   * @throws LeaseLostError (after telling the engine) when it does not; nothing is written.
   */
  private async held<T>(write: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.run.lost) throw new LeaseLostError(this.workflow.id);
    let lost = false;
    const result = await this.deps.store.transaction(async (tx) => {
      // The project's row, then the workflow's: the order every transaction takes them in.
      await tx.lock('projects', this.workflow.projectId);
      await tx.lock('workflows', this.workflow.id);
      if (!(await tx.workflows.isHeldBy(this.workflow.id, this.deps.runner.id))) {
        lost = true;
        return undefined;
      }
      return write(tx);
    });
    if (lost) this.leaseLost();
    return result as T;
  }

  /**
   * Inside `tx`: checks that this runner still holds the workflow.
   * @throws LeaseLostError (after telling the engine) when it does not: `tx` rolls back.
   */
  private async heldIn(tx: Tx): Promise<void> {
    if (this.run.lost) throw new LeaseLostError(this.workflow.id);
    await tx.lock('projects', this.workflow.projectId);
    await tx.lock('workflows', this.workflow.id);
    if (!(await tx.workflows.isHeldBy(this.workflow.id, this.deps.runner.id))) this.leaseLost();
  }

  private leaseLost(): never {
    this.deps.onLeaseLost(this.run);
    throw new LeaseLostError(this.workflow.id);
  }
}

/** A question's rules as stored: as its kind's builder stores them (paths relative to the workspace), else as asked. */
function storedRules(kind: string | undefined, rules: unknown, workspaceDir: string): unknown {
  const toStore = kind ? questionKind(kind)?.toStore : undefined;
  return toStore ? toStore(rules, workspaceDir) : rules;
}

/** The first `max` characters of `text`, with `note` when cut. */
function shortened(text: string, max: number, note: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max).replace(/[\uD800-\uDBFF]$/, '')}… (${note})`;
}
