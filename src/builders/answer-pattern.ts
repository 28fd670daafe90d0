/**
 * The patterns a builder may give a question. They run on RE2 (the `re2js` port), whose matching
 * time is linear in the answer's length whatever the pattern: a pattern like `(a+)+c` cannot
 * freeze the server the way a backtracking engine would.
 */
import { RE2JS } from 're2js';

/** Longest pattern a builder may give a question, in characters. */
export const MAX_PATTERN_LENGTH = 500;

/**
 * Compiles a question's pattern for matching a whole answer.
 * @returns null when the pattern is not valid RE2 syntax (backreferences and look-arounds are not)
 *   or is longer than MAX_PATTERN_LENGTH.
 */
export function compileAnswerPattern(pattern: string): RE2JS | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return null;
  try {
    return RE2JS.compile(`^(?:${pattern})$`);
  } catch {
    return null;
  }
}
