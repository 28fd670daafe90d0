/**
 * `svc_send_message` (docs/contract.md#tools, docs/workflows.md): checks the caller may write,
 * answers a repeated `requestId` from its receipt (`send-receipts.ts`), checks an answer to a
 * builder's kind of question (`answer-verdicts.ts`), records the send (`send-record.ts`) in one
 * transaction with the engine's claim, and reports it (`send-reports.ts`).
 */
import type { Caller } from '../auth/caller.js';
import type { Repos } from '../store/repos.js';
import type { QuestionRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { EngineStarts } from '../workflows/engine-starts.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import { questionKind } from '../builders/builder-registry.js';
import type { ProjectAccess } from './project-access.js';
import { earlierAnswer, finalAnswer, keepAnswer, lockAndFindAnswer, type ReceiptKey } from './send-receipts.js';
import { checkByKind, type AnswerCheckDeps } from './answer-verdicts.js';
import type { CheckedAnswer } from './answer-refusals.js';
import { answersPending, recordSend, type SendMessageInput, type SendRecordDeps } from './send-record.js';
import {
  reportSent,
  reportWaiting,
  type SendOutcome,
  type SendReportDeps,
  type UnclaimedFrom,
} from './send-reports.js';
import type { SendMessageResult } from './resource-shapes.js';
import { checkReleaseParameters } from './release-sends.js';

/** What a send needs: the parts' deps together, with the store, the access rule and the engine. */
export interface SenderDeps
  extends
    Omit<AnswerCheckDeps, 'journal' | 'engine' | 'store'>,
    Omit<SendRecordDeps, 'journal'>,
    Omit<SendReportDeps, 'journal' | 'engine'> {
  store: Store;
  access: Pick<ProjectAccess, 'writable'>;
  engine: Pick<WorkflowEngine, 'claims' | 'runnerId' | 'offer' | 'awaitClaim'>;
  /** The journal: the clock and the messages of the conversation. */
  journal: Pick<WorkflowJournal, 'now' | 'post'>;
}

/**
 * Answers the pending question of the project's waiting workflow (a message with `questionId`,
 * or with neither `questionId` nor `kind`), or else starts (or queues) a new workflow with the
 * message as its instruction: a message with `kind` and no `questionId` is always a new
 * instruction, queued behind the waiting workflow, whose question stays pending.
 * An answered workflow resumes when this server has a free build slot and its turn comes; until
 * then it stays `waiting_for_input` with its question answered, and the result says `queued`.
 * @throws ServiceError -32004/-32003 (project access, owner only); -32602 when `questionId` does
 *   not name the pending question, or the answer breaks the question's rule (nothing changes and
 *   the question stays pending); -32005 (`data.scope = "queued_workflows"`) for a new workflow
 *   while the owner has their plan's `maxQueuedWorkflows` queued (nothing stored).
 * With `input.requestId`, a repeat of it by the same user within 24 hours answers what the first
 * send answered and records nothing (`send-receipts.ts`).
 */
export async function sendMessage(
  deps: SenderDeps,
  caller: Caller,
  input: SendMessageInput,
): Promise<SendMessageResult> {
  const { access, store } = deps;
  checkReleaseParameters(input);
  await access.writable(caller, input.projectId);
  // A repeat of an earlier send's `requestId` answers what it answered (send-receipts.ts).
  const receipt =
    input.requestId === undefined
      ? undefined
      : { userId: caller.userId, requestId: input.requestId, now: Date.now() + store.clockOffsetMs() };
  const earlier = receipt && (await earlierAnswer(store.repos, receipt));
  if (earlier) return earlier;
  // An answer to a builder's kind of question (a code answer: syntax trees, the workspace on disk)
  // is checked before the transaction starts.
  const pending = answersPending(input) ? await pendingOf(store.repos, input.projectId) : undefined;
  const checked =
    pending && questionKind(pending.kind) && (input.questionId ?? pending.id) === pending.id
      ? await checkByKind(deps, pending, input.message)
      : undefined;
  const outcome = await recordAndReport(deps, { caller, input, receipt, checked });
  if (!outcome.unclaimed) return outcome.result;
  const settled = await settleUnclaimed(deps, caller, {
    projectId: input.projectId,
    result: outcome.result,
    from: outcome.unclaimed,
  });
  if (receipt) await finalAnswer(store.repos, receipt, { first: outcome.result, final: settled });
  return settled;
}

/** One send, checked and ready to record. */
interface CheckedSend {
  caller: Caller;
  input: SendMessageInput;
  /** The send's `requestId` with its user and the store's clock, when it has one. */
  receipt: ReceiptKey | undefined;
  /** The answer checked before the transaction, for a question of a builder's own kind. */
  checked: CheckedAnswer | undefined;
}

/**
 * One transaction records the message, lets the engine claim a free slot (so that the answer
 * is exact: `running`, or the queue position), and reports why it waits. On a node that
 * claims nothing, a workflow that only waits for a slot is reported after the commit, once a
 * worker had the chance to claim it (`settleUnclaimed`). The claims are launched after the commit,
 * and given back when the transaction fails. @throws what `recordSend` throws, or the store's error
 */
async function recordAndReport(deps: SenderDeps, send: CheckedSend): Promise<SendOutcome> {
  const { engine, store } = deps;
  const { caller, input, receipt, checked } = send;
  let starts: EngineStarts | undefined;
  let outcome: SendOutcome;
  try {
    outcome = await store.transaction(async (tx) => {
      // A deadlock runs this again (PostgreSQL): the claims of the attempt rolled back are given back.
      starts?.abandon();
      starts = undefined;
      // Every send to the project, through any node, in one order: FIFO and the one-active rule.
      await tx.lock('projects', input.projectId);
      const repeated = receipt && (await lockAndFindAnswer(tx, receipt));
      if (repeated) return { result: repeated };
      const recorded = await recordSend(deps, { tx, caller, input, checked });
      // A workflow queued behind its project's active one cannot start now: no slot to hand out
      // for it (the engines look again when the active one ends, docs/workflows.md "The claim").
      starts = recorded.behindActive ? undefined : await engine.offer(tx);
      const reported = await reportSent(deps, { tx, caller, projectId: input.projectId, recorded, starts });
      if (receipt) await keepAnswer(tx, receipt, reported.result);
      return reported;
    });
  } catch (error) {
    starts?.abandon();
    throw error;
  }
  starts?.launch();
  return outcome;
}

/**
 * After the send's commit, for a workflow another node has to start (this node claims nothing,
 * or another node holds the answered workflow): waits (up to the engine's claim wait) for a
 * worker to claim the new workflow or resume the answered one, and answers `running` when one
 * did; else reports it as waiting for a slot, with its status message, as the claiming node
 * would have.
 */
async function settleUnclaimed(
  deps: SenderDeps,
  caller: Caller,
  waiting: { projectId: string; result: SendMessageResult; from: UnclaimedFrom },
): Promise<SendMessageResult> {
  const { engine, store } = deps;
  const { projectId, result, from } = waiting;
  const row = await engine.awaitClaim({ id: result.workflowId, projectId }, from);
  if (row?.status !== from) return { ...result, status: 'running' };
  return store.transaction(async (tx) => {
    await tx.lock('projects', projectId);
    return reportWaiting(deps, { tx, caller }, { result, from });
  });
}

/** The unanswered question of the project's waiting workflow, if any. */
async function pendingOf(repos: Repos, projectId: string): Promise<QuestionRow | undefined> {
  const active = await repos.workflows.findActive(projectId);
  return active?.status === 'waiting_for_input' ? repos.questions.pendingOf(active.id) : undefined;
}
