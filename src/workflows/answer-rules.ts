/** Checks an answer against the rule of the question it answers (design section 4). */
import type { QuestionRow } from '../store/schema.js';

/** @returns null when `answer` is acceptable, else the reason it is not (for a -32602 message). */
export function checkAnswer(question: Pick<QuestionRow, 'options' | 'pattern'>, answer: string): string | null {
  const value = answer.trim();
  if (value.length === 0) return 'must not be empty';
  if (question.options) {
    const options = JSON.parse(question.options) as string[];
    if (!options.includes(value)) return `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
  }
  if (question.pattern) {
    let rule: RegExp;
    try {
      rule = new RegExp(`^(?:${question.pattern})$`, 'u');
    } catch {
      return null;
    }
    if (!rule.test(value)) return `must match the pattern ${question.pattern}`;
  }
  return null;
}

/** The text an answer is stored and handed to the builder as (surrounding white space removed). */
export function normaliseAnswer(answer: string): string {
  return answer.trim();
}
