/**
 * Verdicts on answers to a builder's own kind of question (the expo builder's `code`), given
 * where they can be (docs/workflows.md "Where answers are checked"): on this node, or by the node
 * holding the workflow through the store (`remote-answer-check.ts`).
 */
import { invalidParameter } from '../errors.js';
import type { AnswerVerdict } from '../builders/builder-module.js';
import type { QuestionRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { checkAnswerHere } from '../workflows/answer-check-runner.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import { checkElsewhere, REMOTE_CHECK_TIMEOUT_MS } from './remote-answer-check.js';
import { accepted, answerRule, longerThan, tooLong, type CheckedAnswer } from './answer-refusals.js';

/** What the checks need: the store, this node's runner id, its clock and its workspaces. */
export interface AnswerCheckDeps {
  store: Pick<Store, 'repos' | 'events' | 'transaction' | 'clockOffsetMs'>;
  engine: Pick<WorkflowEngine, 'runnerId'>;
  journal: Pick<WorkflowJournal, 'now'>;
  /** `<dataDir>/workspaces`: a code question's stored paths are relative to its project's folder there. */
  workspacesDir: string;
  /** How long a check waits for another node's verdict, in ms (default `REMOTE_CHECK_TIMEOUT_MS`). */
  answerCheckTimeoutMs?: number | undefined;
}

/**
 * Checks an answer to `question`, a question of a builder's own kind (the expo builder's `code`),
 * with that kind's rules (builders/builder-registry.ts), where it can be checked (`verdictOn`).
 * @returns the conversation text of the answer.
 * @throws ServiceError -32602 with every problem in `data.issues`, also when the node that had to
 *   check it did not answer in time (`data.reason = "check_timed_out"`; nothing was stored).
 */
export async function checkByKind(
  deps: AnswerCheckDeps,
  question: QuestionRow,
  message: string,
): Promise<CheckedAnswer> {
  const limit = question.maxLength ?? MAX_MESSAGE_LENGTH;
  if (longerThan(message, limit)) throw tooLong(limit, answerRule(question));
  return accepted(question, await verdictOn(deps, question, message));
}

/**
 * Inside the send's transaction, for a question that became pending after the answer was checked
 * (a race with the builder): checked here when this node can, else refused (no waiting inside a
 * transaction). @throws ServiceError -32602
 */
export function checkMovedQuestion(workspacesDir: string, question: QuestionRow, message: string): CheckedAnswer {
  const limit = question.maxLength ?? MAX_MESSAGE_LENGTH;
  if (longerThan(message, limit)) throw tooLong(limit, answerRule(question));
  const here = checkAnswerHere(question, message, workspacesDir);
  if (here && (here.ok || !here.unavailable)) return accepted(question, here);
  const problem =
    'cannot be checked now: a new question was asked while this answer was being checked; read it with svc_get_session and answer it';
  throw invalidParameter('message', problem, { issues: [{ parameter: 'message', problem }], ...answerRule(question) });
}

/**
 * The verdict on an answer, from where it can be given (docs/workflows.md "Where answers are
 * checked"): here, when this node's engine holds the workflow, or nobody holds it and this node
 * has the project's workspace and the builder's tools; else from the node holding the workflow
 * (or, when nobody holds it, the first build worker that takes work), through the store.
 * @throws ServiceError -32602 when that node did not answer within the check's time limit.
 */
async function verdictOn(deps: AnswerCheckDeps, question: QuestionRow, message: string): Promise<AnswerVerdict> {
  const { engine, journal, store, workspacesDir } = deps;
  const workflow = await store.repos.workflows.findById(question.workflowId);
  const now = Date.now() + store.clockOffsetMs();
  const holder = workflow?.runnerId != null && (workflow.leaseExpiresAt ?? 0) > now ? workflow.runnerId : null;
  if (holder === null || holder === engine.runnerId) {
    const here = checkAnswerHere(question, message, workspacesDir);
    if (holder === engine.runnerId)
      return (
        here ?? {
          ok: false,
          issues: [
            { parameter: 'message', problem: 'cannot be checked now: this server has no workspace for the project' },
          ],
        }
      );
    if (here && (here.ok || !here.unavailable)) return here;
  }
  const timeoutMs = deps.answerCheckTimeoutMs ?? REMOTE_CHECK_TIMEOUT_MS;
  const verdict = await checkElsewhere(store, { question, answer: message, now: journal.now(), timeoutMs });
  if (verdict) return verdict;
  const seconds = Math.round(timeoutMs / 100) / 10;
  const who = holder
    ? 'the build worker running this workflow did not answer the check'
    : 'no build worker answered the check';
  const problem = `cannot be checked now: ${who} within ${seconds} s, and nothing was stored; send the answer again (the question is still pending)`;
  throw invalidParameter('message', problem, {
    issues: [{ parameter: 'message', problem }],
    reason: 'check_timed_out',
    ...answerRule(question),
  });
}
