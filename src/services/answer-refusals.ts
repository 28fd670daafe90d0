/**
 * How a refused answer or an over-long message is reported (docs/contract.md#tools,
 * `svc_send_message`): -32602 with every problem in `data.issues`, and the pending question's rule
 * (its id, prompt, options, pattern and a hint) so that the model can answer again.
 */
import { invalidParameter } from '../errors.js';
import type { AnswerVerdict } from '../builders/builder-module.js';
import type { QuestionRow } from '../store/rows.js';

/** An accepted answer: the question it answers and its conversation text. */
export interface CheckedAnswer {
  questionId: string;
  content: string;
}

/**
 * The accepted answer's conversation text. @throws ServiceError -32602 with every problem of a
 * refused one in `data.issues` (the first one in the message).
 */
export function accepted(question: QuestionRow, verdict: AnswerVerdict): CheckedAnswer {
  if (!verdict.ok) {
    const first = verdict.issues[0]!;
    throw invalidParameter(first.parameter, first.problem, { issues: verdict.issues, ...answerRule(question) });
  }
  return { questionId: question.id, content: verdict.content };
}

/**
 * -32602 for a message over `limit` code points (the text the tool schema used to give), with
 * `data` added to the error's data (a question's `answerRule`).
 */
export function tooLong(limit: number, data: Record<string, unknown> = {}): Error {
  const problem = `must be at most ${limit} characters`;
  return invalidParameter('message', problem, { issues: [{ parameter: 'message', problem }], ...data });
}

/** Whether `text` has more than `limit` Unicode code points. */
export function longerThan(text: string, limit: number): boolean {
  // Fast path: UTF-16 length bounds the code point count from above.
  if (text.length <= limit) return false;
  let n = 0;
  for (const _ of text) if (++n > limit) return true;
  return false;
}

/**
 * The error data that restates the pending question's rule: `questionId`, `prompt` (left out for a
 * code question, whose prompt holds the app's files), `options`, `pattern`, `kind` and a `hint`.
 */
export function answerRule(question: QuestionRow): Record<string, unknown> {
  const data: Record<string, unknown> = {
    questionId: question.id,
    // A code question's prompt holds the app's files: the model has it already.
    ...(question.kind !== 'code' && { prompt: question.prompt }),
    hint: 'A workflow of this project is waiting for an answer, and this message (sent with questionId, or with neither questionId nor kind) was taken as the answer. Answer the question; to send a new instruction instead, pass kind ("build" or "deploy") without questionId: it is queued behind the waiting workflow.',
  };
  if (question.options) data.options = JSON.parse(question.options);
  if (question.pattern) data.pattern = question.pattern;
  if (question.kind === 'code') {
    data.kind = 'code';
    data.hint =
      'A code question is waiting: fix the answer (each problem is listed in issues) and send it again with the same questionId, or answer "skip".';
  }
  return data;
}
