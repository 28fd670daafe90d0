/**
 * The expo builder's `code` questions as the service handles them (docs/builders.md "Code questions"): the
 * check of an answer when it is sent, its conversation text, the pages of the app's files, and
 * what `svc_send_message`'s description tells a model about answering one.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import type { AnswerVerdict, PagedFile, QuestionKindRules } from '../builder-module.js';
import { checkCodeAnswer, EDITABLE_FILES, type CodeAnswerRules } from './code-answer.js';
import { DEFAULT_FILE_PAGING, pageFiles } from './code-question-files.js';
import { MAX_MESSAGE_LENGTH } from '../../core/message-limits.js';

/**
 * Checks the answer to a code question against the rules stored with it (`rules`, JSON) and the
 * workspace on disk; writes nothing.
 * @returns the conversation text of an accepted answer (its summary and file list, not the
 *   files' contents, which the build writes into the workspace), or every problem found.
 */
function checkCodeQuestionAnswer(rules: string | null, answer: string, workspaceDir: string): AnswerVerdict {
  const parsed = storedRulesOf(rules, workspaceDir);
  if (!parsed)
    return {
      ok: false,
      issues: [
        { parameter: 'message', problem: 'cannot be checked: the question has no rules (ask again with a new build)' },
      ],
    };
  const checked = checkCodeAnswer(parsed, answer);
  if (!checked.ok) return checked;
  if (checked.answer === 'skip') return { ok: true, content: 'skip (build with deterministic edits only)' };
  const { summary, files, delete: deleted } = checked.answer;
  const listed = files.map((f) => `${f.path} (${Buffer.byteLength(f.content, 'utf8')} bytes)`);
  const lines = [`Code answer: ${summary}`, `Files written: ${listed.join(', ') || 'none'}`];
  if (deleted.length) lines.push(`Files deleted: ${deleted.join(', ')}`);
  return { ok: true, content: lines.join('\n') };
}

/** The pages of the app's files a code question shows (`code-question-files.ts`), or null without rules. */
async function codeQuestionPages(rules: string | null, workspaceDir: string): Promise<PagedFile[][] | null> {
  const parsed = storedRulesOf(rules, workspaceDir);
  return parsed ? pageFiles(parsed.root, parsed.filePaging ?? DEFAULT_FILE_PAGING) : null;
}

/**
 * A code question's rules as they are stored: the workspace, the TypeScript folder and each SDK's packages relative to
 * the project's workspace (`.` for the workspace itself), so that a question asked on one host can
 * be checked on another whose data dir lies elsewhere.
 */
function rulesToStore(rules: CodeAnswerRules, workspaceDir: string): CodeAnswerRules {
  const from = (path: string) => relative(workspaceDir, path) || '.';
  return {
    ...rules,
    root: from(rules.root),
    typescriptFrom: from(rules.typescriptFrom),
    ...(rules.sdkModules && { sdkModules: rules.sdkModules.map((s) => ({ ...s, nodeModules: from(s.nodeModules) })) }),
  };
}

/**
 * The stored rules (JSON), their paths resolved against the project's workspace `workspaceDir`;
 * null without rules. Rules stored before paths were relative hold absolute paths, kept as they are.
 */
function storedRulesOf(rules: string | null, workspaceDir: string): CodeAnswerRules | null {
  const parsed = JSON.parse(rules ?? 'null') as CodeAnswerRules | null;
  if (!parsed) return null;
  const at = (path: string) => (isAbsolute(path) ? path : resolve(workspaceDir, path));
  return {
    ...parsed,
    root: at(parsed.root),
    typescriptFrom: at(parsed.typescriptFrom),
    ...(parsed.sdkModules && { sdkModules: parsed.sdkModules.map((s) => ({ ...s, nodeModules: at(s.nodeModules) })) }),
  };
}

/** The `code` question kind. */
export const CODE_QUESTION_KIND: QuestionKindRules = {
  checkAnswer: checkCodeQuestionAnswer,
  filePages: codeQuestionPages,
  toStore: (rules, workspaceDir) => rulesToStore(rules as CodeAnswerRules, workspaceDir),
};

/** What `svc_send_message`'s description says about answering a code question (one bullet line). */
export const CODE_ANSWER_MESSAGE_RULES: readonly string[] = [
  `- A pendingQuestion of kind "code" asks YOU (the model) for the app's code: do what its prompt says and answer with message = JSON {"summary": "what you changed", "files": [{"path": "App.tsx", "content": "<whole file>"}, {"path": "src/screens/Settings.tsx", "content": "..."}], "delete": ["src/old.ts"]} (pendingQuestion.format is its JSON Schema). Only ${EDITABLE_FILES} may be written; imports only relative or from the packages the prompt lists. Such an answer may be up to pendingQuestion.maxLength characters (instructions and other answers: ${MAX_MESSAGE_LENGTH}). "skip" builds without code changes. A refused answer (-32602, one entry per problem in error.data.issues) leaves the question pending: fix it and send again. If the code does not type-check, a new code question arrives with the compiler's errors: answer it with the complete corrected files.`,
];
