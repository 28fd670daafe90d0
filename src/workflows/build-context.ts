/**
 * The engine's implementation of a builder's `BuildContext` (design section 5): every report is
 * written to the store (with its conversation message) before the call returns.
 */
import { randomUUID } from 'node:crypto';
import type { BuildContext, Platform, PublishedArtifact, PublishRequest, QuestionSpec } from '../builders/builder.js';
import type { WorkflowRow } from '../store/schema.js';
import { toPublished } from './artifact-publisher.js';
import type { LocalRun, WorkflowEngineDeps } from './workflow-engine.js';

/** The context one run of a builder reports through. */
export class EngineBuildContext implements BuildContext {
  constructor(
    private readonly workflow: WorkflowRow,
    private readonly run: LocalRun,
    private readonly deps: WorkflowEngineDeps,
  ) {}

  step(index: number, total: number, name: string): void {
    this.deps.store.immediate(() => {
      this.deps.workflows.update(this.workflow.id, { stepIndex: index, stepTotal: total, stepName: name });
      this.deps.journal.post(this.workflow.projectId, this.workflow.id, {
        role: 'agent',
        type: 'progress',
        content: `Step ${index}/${total}: ${name}`,
      });
    });
  }

  say(content: string, type: 'progress' | 'result' = 'progress'): void {
    this.deps.journal.post(this.workflow.projectId, this.workflow.id, { role: 'agent', type, content });
  }

  recall(key: string): string | null {
    return this.deps.questions.latestAnswer(this.workflow.projectId, key) ?? null;
  }

  async ask(spec: QuestionSpec): Promise<string> {
    const signal = this.run.controller.signal;
    if (signal.aborted) throw signal.reason;
    const { journal, questions, workflows, store } = this.deps;
    const earlier = questions.findByKey(this.workflow.id, spec.key);
    if (earlier?.answer != null) return earlier.answer;

    const question =
      earlier ??
      store.immediate(() => {
        const row = {
          id: randomUUID(),
          workflowId: this.workflow.id,
          projectId: this.workflow.projectId,
          key: spec.key,
          prompt: spec.prompt,
          options: spec.options ? JSON.stringify(spec.options) : null,
          pattern: spec.pattern ?? null,
          askedAt: journal.now(),
          answer: null,
          answeredAt: null,
        };
        questions.insert(row);
        return row;
      });

    return new Promise<string>((resolve, reject) => {
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
      const options = spec.options?.length ? ` Options: ${spec.options.join(', ')}.` : '';
      const moved = journal.transition(this.workflow, 'running', 'ask', {}, {
        role: 'agent',
        type: 'question',
        content: `${spec.prompt}${options}`,
      });
      if (!moved) {
        // Cancelled between the builder's last step and this question, or answered already.
        const current = workflows.findById(this.workflow.id);
        const answered = questions.findById(question.id);
        if (answered?.answer != null) this.run.waiting.resolve(answered.answer);
        else if (current?.status !== 'waiting_for_input') this.run.waiting.reject('cancel');
      }
    });
  }

  async publish(request: PublishRequest): Promise<PublishedArtifact> {
    const { published, refused } = await this.deps.publisher.publish(this.workflow.projectId, this.workflow.id, request);
    if (refused.length > 0) {
      const shown = refused.slice(0, 10).join(', ');
      const more = refused.length > 10 ? ` and ${refused.length - 10} more` : '';
      this.say(`Not published (links that leave the published folder, or not regular files): ${shown}${more}.`);
    }
    return published;
  }

  latestPreview(platform: Platform): PublishedArtifact | null {
    const row = this.deps.artifacts.latest(this.workflow.projectId, 'preview', platform);
    return row ? toPublished(row) : null;
  }
}
