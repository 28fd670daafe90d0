/**
 * The sending node's side of an answer checked on another node (docs/workflows.md "Where answers
 * are checked"): stores the answer as an `answer_checks` row with a `workflow` notice, waits for the
 * verdict that the node holding the workflow (or the first free build worker) writes, and deletes
 * the row. The verdict's `project` notice wakes the wait; a reset and a short recheck cover a
 * missed notice.
 */
import { randomUUID } from 'node:crypto';
import type { AnswerVerdict } from '../builders/builder-module.js';
import type { QuestionRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { waitForProjectRead } from '../workflows/workflow-wait.js';

/** How long a send waits for another node's verdict by default, in ms. */
export const REMOTE_CHECK_TIMEOUT_MS = 10_000;

/** How often the wait reads the row again without a notice, in ms. */
const RECHECK_MS = 250;

/** One answer to check on another node. */
export interface RemoteCheck {
  question: QuestionRow;
  /** The answer's text as sent. */
  answer: string;
  /** The ISO 8601 time written as the row's `created_at`. */
  now: string;
  /** Longest wait, in ms. */
  timeoutMs: number;
}

/**
 * Has `check.answer` to `check.question` checked by another node and waits for the verdict.
 * @returns the verdict, or null when none came within `check.timeoutMs` (the row is deleted: a
 *   late verdict is dropped, and nothing was stored for the answer).
 * @throws the store's error when a write or a read fails.
 */
export async function checkElsewhere(
  store: Pick<Store, 'repos' | 'events' | 'transaction'>,
  check: RemoteCheck,
): Promise<AnswerVerdict | null> {
  const { question, answer, now, timeoutMs } = check;
  const id = randomUUID();
  await store.transaction(async (tx) => {
    await tx.answerChecks.insert({
      id,
      questionId: question.id,
      workflowId: question.workflowId,
      answer,
      checkedBy: null,
      verdict: null,
      createdAt: now,
    });
    tx.publish({ kind: 'workflow', id: question.workflowId });
  });
  try {
    return await waitForVerdict(store, { id, projectId: question.projectId, timeoutMs });
  } finally {
    await store.repos.answerChecks.delete(id);
  }
}

/** Resolves with check `id`'s verdict once written, or null after `timeoutMs` (in ms). */
async function waitForVerdict(
  store: Pick<Store, 'repos' | 'events'>,
  { id, projectId, timeoutMs }: { id: string; projectId: string; timeoutMs: number },
): Promise<AnswerVerdict | null> {
  const row = await waitForProjectRead(
    store,
    projectId,
    () => store.repos.answerChecks.findById(id),
    (found) => found?.verdict != null,
    { timeoutMs, recheckMs: RECHECK_MS },
  );
  return row?.verdict != null ? (JSON.parse(row.verdict) as AnswerVerdict) : null;
}
