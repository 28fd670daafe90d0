/**
 * Code answers (docs/builders.md "Code questions"): the JSON a host's model sends with `svc_send_message`
 * to answer a question of kind `code`, and every check it must pass before anything is written.
 *
 *   {"summary": "...", "files": [{"path": "App.tsx", "content": "..."}], "delete": ["src/old.ts"]}
 *
 * or the bare word `skip` (build with deterministic edits only). The checks are pure data
 * (`CodeAnswerRules`, stored with the question) plus the workspace on disk, so that the service
 * can refuse a bad answer at once (-32602, the question stays pending) and the builder can check
 * the same answer again before it writes a byte.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { issueReason } from '../../io/issue-reason.js';
import { contentIssues, type CodeAnswerIssue, type ContentRules } from './code-answer-checks.js';
import type { SdkModules } from './sdk-modules.js';

/** Characters of file contents on a code question's prompt (page 1) and on each further page (`code-question-files.ts`). */
export interface FilePaging {
  first: number;
  page: number;
}

/** The checks a code answer must pass; stored as JSON with its question. */
export interface CodeAnswerRules {
  /** The project's workspace (absolute): no path of the answer may pass through a link in it. */
  root: string;
  /** Packages the app may import (the template's dependencies); subpaths (`pkg/x`) are allowed. */
  packages: string[];
  /** A `node_modules` folder holding `typescript`, used to read imports from the syntax tree. */
  typescriptFrom: string;
  /** Every served SDK's packages: a package import must resolve in each (absent in questions asked before several SDKs). */
  sdkModules?: SdkModules[];
  /** Most files written in one answer. */
  maxFiles: number;
  /** Most UTF-8 bytes of one file. */
  maxFileBytes: number;
  /** Most UTF-8 bytes of all files together. */
  maxTotalBytes: number;
  /** How the question pages the app's files (`code-question-files.ts`); absent in questions asked before paging. */
  filePaging?: FilePaging;
}

/** A checked code answer. */
export interface CodeAnswer {
  summary: string;
  files: Array<{ path: string; content: string }>;
  delete: string[];
}

/** The outcome of `checkCodeAnswer`. */
export type CodeAnswerCheck =
  { ok: true; answer: CodeAnswer | 'skip' } | { ok: false; issues: CodeAnswerIssue[]; unavailable?: true };

/** The answer that builds with deterministic edits only. */
const SKIP_ANSWER = 'skip';

/** The editable files, as told to models and people. */
export const EDITABLE_FILES = 'App.tsx and src/**/*.{ts,tsx,json}';

/** JSON Schema (2020-12) of a code answer, as `pendingQuestion.format` shows it. */
export function codeAnswerFormat(rules: Pick<CodeAnswerRules, 'maxFiles' | 'maxFileBytes'>): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    additionalProperties: false,
    required: ['summary', 'files'],
    properties: {
      summary: { type: 'string', minLength: 1, maxLength: 500, description: 'One or two sentences: what you changed' },
      files: {
        type: 'array',
        maxItems: rules.maxFiles,
        description: `Whole new contents of each file written (${EDITABLE_FILES})`,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['path', 'content'],
          properties: {
            path: {
              type: 'string',
              pattern:
                '^(App\\.tsx|src/([A-Za-z0-9_@-][A-Za-z0-9_.@-]*/)*[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\\.(ts|tsx|json))$',
            },
            content: { type: 'string', description: `The whole file, UTF-8, at most ${rules.maxFileBytes} bytes` },
          },
        },
      },
      delete: { type: 'array', items: { type: 'string' }, description: 'Files to remove (same path rule)' },
    },
  };
}

const answerSchema = z.strictObject({
  summary: z.string().trim().min(1).max(500),
  files: z.array(z.strictObject({ path: z.string(), content: z.string() })),
  delete: z.array(z.string()).optional(),
});

/** Names the service itself manages or the bundler reads as configuration; never written by an answer. */
const CONFIG_NAME =
  /^(package(-lock)?\.json|app\.json|app\.config\.[cm]?[jt]s|tsconfig(\..*)?\.json|jsconfig\.json|babel\.config\.[cm]?js|\.babelrc.*|metro\.config\.[cm]?js|eas\.json|\.env.*)$/i;
const SEGMENT = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why `path` may not be written or deleted by an answer, or null when it may. Pure: links on
 * disk are checked by `linkOnPath`.
 */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'is empty';
  if (path.length > 200) return 'is longer than 200 characters';
  if (CONTROL.test(path)) return 'contains control characters';
  if (path.includes('\\')) return 'contains a backslash (use / between folders)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path))
    return 'is absolute (give a path relative to the app, such as src/screens/Home.tsx)';
  const segments = path.split('/');
  if (segments.some((s) => s === '..')) return 'contains ".." (paths stay inside the app)';
  if (segments.some((s) => s === '.' || s === '')) return 'contains an empty or "." segment';
  const name = segments[segments.length - 1]!;
  if (name.toLowerCase().endsWith('.d.ts')) return 'is a declaration file (.d.ts); declarations are not editable';
  if (CONFIG_NAME.test(name))
    return `is a configuration file, which answers may not change (editable: ${EDITABLE_FILES})`;
  if (segments.some((s) => !SEGMENT.test(s)))
    return 'may contain only letters, digits and _ - . @ in each segment, and no segment may start with "."';
  const allowed =
    path === 'App.tsx' || (segments[0] === 'src' && segments.length >= 2 && /\.(ts|tsx|json)$/.test(name));
  if (!allowed) return `is outside the editable files (${EDITABLE_FILES})`;
  return null;
}

/**
 * The first symbolic link (or non-folder) met on the way from `root` to `root/path`, as a
 * workspace-relative path with the reason, or null when every existing component is a plain
 * folder (and the file itself, when it exists, a regular file).
 */
export function linkOnPath(root: string, path: string): string | null {
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const rel = segments.slice(0, i + 1).join('/');
    let info;
    try {
      info = lstatSync(join(root, rel));
    } catch {
      return null; // Absent from here on: created as plain folders and files.
    }
    if (info.isSymbolicLink())
      return `goes through a symbolic link in the workspace (${rel}); links are never followed`;
    const last = i === segments.length - 1;
    if (!last && !info.isDirectory()) return `needs ${rel} to be a folder, but it is a file`;
    if (last && !info.isFile()) return 'names something in the workspace that is not a regular file';
  }
  return null;
}

/**
 * Checks a code answer against `rules` and the workspace on disk. Reads no file contents and
 * writes nothing. The stages run in order: the skip word, the JSON and its shape (`parseAnswer`,
 * which alone stops at its first failure), the file count (`countIssues`), each written file's
 * path (`pathChecker`) and content (`contentIssues`), the total size, each deleted path.
 * @returns the parsed answer, or every problem found (each with where and why).
 */
export function checkCodeAnswer(rules: CodeAnswerRules, message: string): CodeAnswerCheck {
  const text = message.trim();
  if (text.toLowerCase() === SKIP_ANSWER) return { ok: true, answer: SKIP_ANSWER };
  const parsed = parseAnswer(text);
  if (!parsed.ok) return parsed;
  const { answer } = parsed;
  const issues = countIssues(answer, rules.maxFiles);
  // The toolchain's TypeScript could not be loaded here: another host may have it.
  let unavailable = false;
  const contentRules: ContentRules = {
    maxFileBytes: rules.maxFileBytes,
    typescriptFrom: rules.typescriptFrom,
    packages: new Set(rules.packages),
    ...(rules.sdkModules && { sdkModules: rules.sdkModules }),
  };
  const checkPath = pathChecker(rules.root, issues);
  let total = 0;
  answer.files.forEach((file, i) => {
    const where = `message.files[${i}]`;
    if (!checkPath(file.path, `${where}.path`, false)) return;
    const content = contentIssues({ ...file, where: `${where}.content`, rules: contentRules });
    issues.push(...content.issues);
    total += content.bytes;
    if (content.unavailable) unavailable = true;
  });
  if (total > rules.maxTotalBytes)
    issues.push({ parameter: 'message.files', problem: `hold ${total} bytes in all; at most ${rules.maxTotalBytes}` });
  answer.delete.forEach((path, i) => checkPath(path, `message.delete[${i}]`, true));
  if (issues.length === 0) return { ok: true, answer };
  const refused = issues.slice(0, 50);
  return unavailable ? { ok: false, issues: refused, unavailable: true } : { ok: false, issues: refused };
}

/**
 * The first stage of `checkCodeAnswer`: `text` (the trimmed message) parsed as JSON and checked
 * against the answer's shape (`answerSchema`), with `delete` defaulting to none.
 * @returns the answer, or the refusal: one issue when the text is not JSON, else one per shape
 *   problem, each `parameter` a path such as `message.files[0].path`.
 */
function parseAnswer(text: string): { ok: true; answer: CodeAnswer } | { ok: false; issues: CodeAnswerIssue[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      issues: [
        {
          parameter: 'message',
          problem: `is not JSON (${(error as Error).message}); send {"summary": ..., "files": [{"path": ..., "content": ...}], "delete": [...]}, or "skip"`,
        },
      ],
    };
  }
  const parsed = answerSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => ({
        parameter: ['message', ...issue.path]
          .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
          .join(''),
        problem: issue.code === 'unrecognized_keys' ? `has unknown keys ${issue.keys.join(', ')}` : issueReason(issue),
      })),
    };
  }
  return {
    ok: true,
    answer: { summary: parsed.data.summary, files: parsed.data.files, delete: parsed.data.delete ?? [] },
  };
}

/** The issues of an answer's file count: nothing changed at all, or more than `maxFiles` files written. */
function countIssues(answer: CodeAnswer, maxFiles: number): CodeAnswerIssue[] {
  const issues: CodeAnswerIssue[] = [];
  if (answer.files.length === 0 && answer.delete.length === 0)
    issues.push({ parameter: 'message.files', problem: 'is empty; change at least one file, or answer "skip"' });
  if (answer.files.length > maxFiles)
    issues.push({ parameter: 'message.files', problem: `has ${answer.files.length} files; at most ${maxFiles}` });
  return issues;
}

/**
 * The path stage of `checkCodeAnswer`: a checker that pushes onto `issues` (at `where`) the first
 * problem of a written or deleted path: `pathProblem`, a path met before in the answer (compared
 * without case, written and deleted alike), a link on the way (`linkOnPath` under `root`), or, when
 * `mustExist`, its absence from the app.
 * @returns the checker, true when the path passed.
 */
function pathChecker(
  root: string,
  issues: CodeAnswerIssue[],
): (path: string, where: string, mustExist: boolean) => boolean {
  const seen = new Map<string, string>();
  return (path, where, mustExist) => {
    const problem = pathProblem(path);
    if (problem) {
      issues.push({ parameter: where, problem: `${JSON.stringify(path.slice(0, 200))} ${problem}` });
      return false;
    }
    const folded = path.toLowerCase();
    const other = seen.get(folded);
    if (other !== undefined) {
      issues.push({
        parameter: where,
        problem: `"${path}" ${other === path ? 'appears twice' : `differs from "${other}" only in case`}`,
      });
      return false;
    }
    seen.set(folded, path);
    const link = linkOnPath(root, path);
    if (link) {
      issues.push({ parameter: where, problem: `"${path}" ${link}` });
      return false;
    }
    if (mustExist && !exists(join(root, path))) {
      issues.push({ parameter: where, problem: `"${path}" does not exist in the app` });
      return false;
    }
    return true;
  };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
