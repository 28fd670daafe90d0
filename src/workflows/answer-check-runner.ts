/**
 * Answers checked where they can be (docs/workflows.md "Where answers are checked"): an answer to a
 * builder's kind of question (the expo builder's `code`) is checked against the project's workspace
 * and the builder's toolchain. A node that holds neither (an `api` node) stores the answer as an
 * `answer_checks` row with a `workflow` notice; the engine holding the workflow, or, when no runner
 * holds it, the first engine that takes work, takes the row, runs the same check on its own
 * workspace and writes the verdict with a `project` notice. The sending node waits for it.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnswerVerdict } from '../builders/builder-module.js';
import { questionKind } from '../builders/builder-registry.js';
import type { Logger } from '../logger.js';
import type { AnswerCheckRow, QuestionRow, WorkflowRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { WorkspaceSync } from './workspace-sync.js';

/**
 * Checks `answer` to `question` (a question of a builder's own kind) on this host: against the
 * project's workspace under `workspacesDir`, with the kind's rules. Writes nothing.
 * @returns the verdict; null when this host has no workspace folder for the project (it cannot check).
 */
export function checkAnswerHere(
  question: Pick<QuestionRow, 'kind' | 'rules' | 'projectId'>,
  answer: string,
  workspacesDir: string,
): AnswerVerdict | null {
  const workspaceDir = join(workspacesDir, question.projectId);
  if (!existsSync(workspaceDir)) return null;
  const rules = questionKind(question.kind);
  if (!rules)
    return {
      ok: false,
      issues: [
        { parameter: 'message', problem: `cannot be checked: no builder asks questions of kind "${question.kind}"` },
      ],
    };
  return rules.checkAnswer(question.rules, answer, workspaceDir);
}

/** How long a check row lives before any node's sweep deletes it (its sender gave up long before), in ms. */
const STALE_CHECK_MS = 5 * 60_000;

/** What the runner needs from its engine. */
export interface AnswerCheckRunnerDeps {
  store: Store;
  /** `<dataDir>/workspaces`. */
  workspacesDir: string;
  logger: Logger;
  /** This engine's runner id (written as `checked_by`). */
  runnerId: string;
  /** Whether this engine runs workflow `workflowId` now (its builder waits in this process). */
  holds(workflowId: string): boolean;
  /** Whether this engine takes work now (it claims, and is not draining or stopped): it then checks for workflows nobody holds. */
  takesWork(): boolean;
  /** Workspace snapshots (PostgreSQL): a check for a workflow nobody holds first brings this worker's copy up to date. */
  workspaceSync?: WorkspaceSync | undefined;
}

/** The engine's side: takes the checks it should run and writes their verdicts. */
export class AnswerCheckRunner {
  /** Checks being run by this process (a notice and a tick may both find one). */
  private readonly running = new Set<string>();
  /** When `sweep` last deleted (ms since the epoch). */
  private sweptAt = 0;

  constructor(private readonly deps: AnswerCheckRunnerDeps) {}

  /**
   * Runs the open checks of workflow `workflowId`, or of every workflow, that are this engine's to
   * run: those of a workflow it holds, and (when it takes work) those of a workflow nobody holds.
   * Failures are logged; the sender times out.
   */
  async serve(workflowId?: string): Promise<void> {
    const { store, logger } = this.deps;
    try {
      const open = await store.repos.answerChecks.listOpen(workflowId);
      for (const check of open) {
        if (this.running.has(check.id)) continue;
        this.running.add(check.id);
        try {
          await this.run(check);
        } finally {
          this.running.delete(check.id);
        }
      }
    } catch (error) {
      logger.error({ err: error }, 'checking an answer for another node failed');
    }
  }

  /**
   * Deletes checks older than `STALE_CHECK_MS` (their senders stopped), at most once a minute.
   * @param now ms since the epoch.
   */
  async sweep(now: number): Promise<void> {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    await this.deps.store.repos.answerChecks.deleteBefore(new Date(now - STALE_CHECK_MS).toISOString());
  }

  private async run(check: AnswerCheckRow): Promise<void> {
    const { store, runnerId } = this.deps;
    const workflow = await store.repos.workflows.findById(check.workflowId);
    if (!workflow || !this.mine(workflow)) return;
    const question = await store.repos.questions.findById(check.questionId);
    if (!question) return;
    if (!(await store.repos.answerChecks.take(check.id, runnerId))) return;
    const verdict = await this.verdict(workflow, question, check.answer);
    await store.transaction(async (tx) => {
      if (await tx.answerChecks.settle(check.id, runnerId, JSON.stringify(verdict)))
        tx.publish({ kind: 'project', id: question.projectId });
    });
  }

  /** Whether this engine should check for `workflow`: it holds it, or nobody does and this engine takes work. */
  private mine(workflow: WorkflowRow): boolean {
    if (workflow.runnerId === this.deps.runnerId) return this.deps.holds(workflow.id);
    return workflow.runnerId === null && workflow.status === 'waiting_for_input' && this.deps.takesWork();
  }

  private async verdict(workflow: WorkflowRow, question: QuestionRow, answer: string): Promise<AnswerVerdict> {
    const { workspacesDir, workspaceSync, logger } = this.deps;
    if (workflow.runnerId === null) {
      // Nobody holds the workflow: the worker that resumes it starts from the project's last
      // completed workspace (an empty one before the first completion), so this copy is brought
      // up to it first (quietly: nothing runs in it now).
      const workspaceDir = join(workspacesDir, workflow.projectId);
      try {
        await workspaceSync?.restore(workflow.projectId, workspaceDir, async () => {});
        await mkdir(workspaceDir, { recursive: true });
      } catch (error) {
        logger.warn({ err: error, workflowId: workflow.id }, 'could not restore a workspace to check an answer');
      }
    }
    return (
      checkAnswerHere(question, answer, workspacesDir) ?? {
        ok: false,
        unavailable: true,
        issues: [
          {
            parameter: 'message',
            problem:
              'cannot be checked now: the build worker has no workspace for this project (send the answer again)',
          },
        ],
      }
    );
  }
}
