/** Checks an answer against the rule of the question it answers (docs/contract.md#tools, `svc_send_message`). */
import { compileAnswerPattern } from '../builders/answer-pattern.js';
import type { QuestionRow } from '../store/rows.js';

/** @returns null when `answer` is acceptable, else the reason it is not (for a -32602 message). */
export function checkAnswer(question: Pick<QuestionRow, 'options' | 'pattern'>, answer: string): string | null {
  const value = answer.trim();
  if (value.length === 0) return 'must not be empty';
  if (question.options) {
    const options = JSON.parse(question.options) as string[];
    if (!options.includes(value)) return `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
  }
  if (question.pattern) {
    const rule = compileAnswerPattern(question.pattern);
    if (rule && !rule.matches(value)) return `must match the pattern ${question.pattern}`;
  }
  return null;
}

/** The text an answer is stored and handed to the builder as (surrounding white space removed). */
export function normaliseAnswer(answer: string): string {
  return answer.trim();
}
