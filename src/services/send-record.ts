/**
 * What `svc_send_message` stores (docs/contract.md#tools, docs/workflows.md): the answer to the
 * pending question of the project's waiting workflow, or a new `queued` workflow with its
 * instruction message. Runs inside the send's transaction, under the project's lock.
 */
import type { Caller } from '../auth/caller.js';
import { invalidParameter, rateLimited } from '../errors.js';
import { limitsFor, workflowBounds, type PlanTable } from '../limits/plans.js';
import type { QuestionRow, WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';
import { checkAnswer, normaliseAnswer } from '../workflows/answer-rules.js';
import { questionKind } from '../builders/builder-registry.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import { inferKind } from './instruction-kind.js';
import { recordRelease } from './release-sends.js';
import { newWorkflowRow } from './workflow-row.js';
import { resolveCheckpoint, restoreInstruction } from '../workflows/checkpoints.js';
import { checkMovedQuestion } from './answer-verdicts.js';
import { answerRule, longerThan, tooLong, type CheckedAnswer } from './answer-refusals.js';
import type { SendMessageResult } from './resource-shapes.js';
import type { WorkflowKind } from '../core/releases.js';

/** Validated `svc_send_message` arguments. */
export interface SendMessageInput {
  projectId: string;
  message: string;
  kind?: WorkflowKind | undefined;
  /** A deploy's channel (docs/releases.md; default production). */
  channel?: string | undefined;
  /** A deploy's staged rollout, 1..100 (default 100). */
  rolloutPercent?: number | undefined;
  questionId?: string | undefined;
  /** The client's id of this send: a repeat within 24 hours answers what the first answered (`send-receipts.ts`). */
  requestId?: string | undefined;
}

/** What recording needs: the journal (messages, clock), the plans and the builder sends are for. */
export interface SendRecordDeps {
  journal: Pick<WorkflowJournal, 'now' | 'post'>;
  /** The plans, for each user's bound on queued workflows. */
  plans: PlanTable;
  /** `<dataDir>/workspaces`, where a moved code question's answer is checked (`answer-verdicts.ts`). */
  workspacesDir: string;
  /** The builder recorded in the new workflow (only a worker with it claims it); none when absent. */
  builderName?: string | undefined;
}

/** One send to record, inside its transaction. */
export interface SendRecord {
  tx: Tx;
  caller: Caller;
  input: SendMessageInput;
  /** The answer checked before the transaction, for a question of a builder's own kind. */
  checked: CheckedAnswer | undefined;
}

/** What was recorded: the send's first answer, and whether it answered a question (else it queued a workflow). */
export interface Recorded {
  result: SendMessageResult;
  answered: boolean;
  /**
   * True for a new workflow queued while its project has an active workflow: it cannot start
   * before that one ends (which wakes the engines then), so no engine needs an offer or a notice now.
   */
  behindActive?: boolean;
  /**
   * The new workflow's row as this transaction inserted it (`queued`), for a new instruction: with
   * `behindActive` nothing in the transaction can have changed it, so the report reads it from here.
   */
  row?: WorkflowRow;
}

/**
 * Whether a message answers the pending question, if one waits: it does with `questionId`, and
 * with neither `questionId` nor `kind`; with `kind` alone it is a new instruction.
 */
export function answersPending(input: SendMessageInput): boolean {
  return input.questionId !== undefined || input.kind === undefined;
}

/**
 * Stores the answer, or the new workflow as `queued` with its instruction message.
 * @throws ServiceError -32602 when `questionId` does not name the pending question or the answer
 *   breaks its rule, or the message is too long; -32005 (`data.scope = "queued_workflows"`) when
 *   the owner has their plan's `maxQueuedWorkflows` queued. Nothing is stored then.
 */
export async function recordSend(deps: SendRecordDeps, send: SendRecord): Promise<Recorded> {
  const { tx, input } = send;
  // A new instruction (`kind` without `questionId`): whether the project has an active workflow is
  // all it needs, not that workflow's row.
  if (!answersPending(input)) return recordInstruction(deps, send, await tx.workflows.hasActive(input.projectId));
  const active = await tx.workflows.findActive(input.projectId);
  const pending = active?.status === 'waiting_for_input' ? await tx.questions.pendingOf(active.id) : undefined;
  if (active && pending) return recordAnswer(deps, send, { active, pending });
  if (input.questionId !== undefined) {
    throw invalidParameter('questionId', 'does not match a pending question: no question is waiting for an answer');
  }
  return recordInstruction(deps, send, active !== undefined);
}

/** Stores the answer to `pending`, the question of waiting workflow `active`. */
async function recordAnswer(
  deps: SendRecordDeps,
  { tx, input, checked }: SendRecord,
  { active, pending }: { active: WorkflowRow; pending: QuestionRow },
): Promise<Recorded> {
  const { journal } = deps;
  if (input.questionId !== undefined && input.questionId !== pending.id) {
    throw invalidParameter('questionId', 'does not match the pending question', { pendingQuestionId: pending.id });
  }
  let content = input.message;
  if (questionKind(pending.kind)) {
    content = (
      checked?.questionId === pending.id ? checked : checkMovedQuestion(deps.workspacesDir, pending, input.message)
    ).content;
  } else {
    if (longerThan(input.message, MAX_MESSAGE_LENGTH)) throw tooLong(MAX_MESSAGE_LENGTH);
    const problem = checkAnswer(pending, input.message);
    if (problem) throw invalidParameter('message', problem, answerRule(pending));
  }
  await tx.questions.answer(pending.id, normaliseAnswer(input.message), journal.now());
  const message = await journal.post(input.projectId, active.id, { role: 'user', type: 'answer', content }, tx);
  return {
    result: { messageId: message.id, workflowId: active.id, kind: active.kind, status: 'running' },
    answered: true,
  };
}

/**
 * Stores a new workflow as `queued`, with the message as its instruction (a restore's names the
 * checkpoint it restores); `behindActive`: its project has an active workflow (`Recorded.behindActive`).
 * @throws ServiceError -32602 for a restore that names no checkpoint
 */
async function recordInstruction(
  deps: SendRecordDeps,
  { tx, caller, input }: SendRecord,
  behindActive: boolean,
): Promise<Recorded> {
  const { journal } = deps;
  const { workflows } = tx;
  if (longerThan(input.message, MAX_MESSAGE_LENGTH)) throw tooLong(MAX_MESSAGE_LENGTH);
  // A restore names a checkpoint (docs/builders.md "Checkpoints"); its workflow's instruction says which.
  const restored =
    input.kind === 'restore'
      ? await resolveCheckpoint(tx.artifacts, input.projectId, input.message, tx.releases)
      : undefined;
  // Counted in the write transaction of the insert: concurrent sends cannot pass the bound.
  const { maxQueued } = workflowBounds(limitsFor(deps.plans, caller.plan));
  if ((await workflows.countQueuedByOwner(caller.userId)) >= maxQueued) {
    throw rateLimited({
      scope: 'queued_workflows',
      limit: maxQueued,
      plan: caller.plan,
      hint: 'You have the most queued workflows your plan allows. Wait until some of them start (svc_get_session), or cancel some with svc_cancel_workflow.',
    });
  }

  const kind = input.kind ?? inferKind(input.message);
  const row = newWorkflowRow({
    projectId: input.projectId,
    seq: await workflows.nextSeq(),
    kind,
    instruction: restored ? restoreInstruction(restored) : input.message,
    builder: deps.builderName ?? null,
    createdAt: journal.now(),
  });
  await workflows.insert(row);
  await recordRelease(tx, row, input);
  const message = await journal.post(
    input.projectId,
    row.id,
    { role: 'user', type: 'instruction', content: input.message },
    tx,
  );
  const result: SendMessageResult = { messageId: message.id, workflowId: row.id, kind, status: 'queued' };
  return behindActive ? { result, answered: false, behindActive, row } : { result, answered: false, row };
}
