/** Checks an answer against the rule of the question it answers (docs/contract.md#tools, `svc_send_message`). */
import { compileAnswerPattern } from '../builders/answer-pattern.js';
import { checkCodeAnswer, type CodeAnswerIssue, type CodeAnswerRules } from '../builders/code-answer.js';
import { isAbsolute, relative, resolve } from 'node:path';
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

/**
 * Checks the answer to a code question (README "Code questions") against the rules stored with
 * it and the workspace on disk; writes nothing.
 * @returns the conversation text of an accepted answer (its summary and file list, not the
 *   files' contents, which the build writes into the workspace), or every problem found.
 */
export function checkCodeQuestionAnswer(question: Pick<QuestionRow, 'rules'>, answer: string, workspaceDir: string): { ok: true; content: string } | { ok: false; issues: CodeAnswerIssue[] } {
  const rules = storedRulesOf(question, workspaceDir);
  if (!rules) return { ok: false, issues: [{ parameter: 'message', problem: 'cannot be checked: the question has no rules (ask again with a new build)' }] };
  const checked = checkCodeAnswer(rules, answer);
  if (!checked.ok) return checked;
  if (checked.answer === 'skip') return { ok: true, content: 'skip (build with deterministic edits only)' };
  const { summary, files, delete: deleted } = checked.answer;
  const listed = files.map((f) => `${f.path} (${Buffer.byteLength(f.content, 'utf8')} bytes)`);
  const lines = [`Code answer: ${summary}`, `Files written: ${listed.join(', ') || 'none'}`];
  if (deleted.length) lines.push(`Files deleted: ${deleted.join(', ')}`);
  return { ok: true, content: lines.join('\n') };
}

/**
 * A code question's rules as stored: the workspace and the TypeScript folder relative to the
 * project's workspace (`.` for the workspace itself), so that a question asked on one host can be
 * checked on another whose data dir lies elsewhere (docs/architecture.md "The store port").
 */
export function rulesToStore(rules: CodeAnswerRules, workspaceDir: string): CodeAnswerRules {
  return { ...rules, root: relative(workspaceDir, rules.root) || '.', typescriptFrom: relative(workspaceDir, rules.typescriptFrom) || '.' };
}

/**
 * The rules stored with `question`, their paths resolved against the project's workspace
 * `workspaceDir`; null when it has none. Rules stored before paths were relative hold absolute
 * paths, which are kept as they are.
 */
export function storedRulesOf(question: Pick<QuestionRow, 'rules'>, workspaceDir: string): CodeAnswerRules | null {
  const rules = JSON.parse(question.rules ?? 'null') as CodeAnswerRules | null;
  if (!rules) return null;
  const at = (path: string) => (isAbsolute(path) ? path : resolve(workspaceDir, path));
  return { ...rules, root: at(rules.root), typescriptFrom: at(rules.typescriptFrom) };
}

/** The text an answer is stored and handed to the builder as (surrounding white space removed). */
export function normaliseAnswer(answer: string): string {
  return answer.trim();
}
