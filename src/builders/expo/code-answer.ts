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
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { z } from 'zod';
import { issueReason } from '../../io/issue-reason.js';
import { sdksMissing, type SdkModules } from './sdk-modules.js';

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

/** One reason an answer was refused: `parameter` is where (`message.files[1].path`), `problem` why. */
interface CodeAnswerIssue {
  parameter: string;
  problem: string;
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
// Source text may hold tabs and line breaks, nothing else below U+0020 (it keeps the answer's
// JSON escaping at most 4 bytes per character: see docs/builders.md "Code questions").
// eslint-disable-next-line no-control-regex
const CONTENT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

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

type TypeScript = typeof import('typescript');
const typescripts = new Map<string, TypeScript>();

/** The toolchain's own `typescript` (not a dependency of this server), loaded once per folder. */
function loadTypeScript(nodeModules: string): TypeScript {
  let ts = typescripts.get(nodeModules);
  if (!ts) {
    ts = createRequire(join(nodeModules, 'noop.js'))('typescript') as TypeScript;
    typescripts.set(nodeModules, ts);
  }
  return ts;
}

/** Deepest syntax tree an answer's file may have (nested expressions, blocks, JSX elements). */
const MAX_SYNTAX_DEPTH = 400;

/** A file nested deeper than `MAX_SYNTAX_DEPTH` (or than the parser can follow). */
class TooDeepError extends Error {}

/** What `importsOf` found: the specifiers, and the uses of `require` other than `require("x")`. */
interface ImportScan {
  specifiers: Array<string | null>;
  /** Source text of each other use of `require` (`require.context`, `(require as any).resolve`, `const r = require`). */
  requireUses: string[];
}

/**
 * Module specifiers a TypeScript file imports (import and export declarations, `import x =
 * require()`, `require()`, `import()` and `import("x")` types), read from the syntax tree.
 * A `require` or `import()` whose argument is not a string literal yields null.
 * @throws TooDeepError when the file nests deeper than `MAX_SYNTAX_DEPTH`.
 */
function importsOf(ts: TypeScript, path: string, content: string): ImportScan {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  let file: import('typescript').SourceFile;
  try {
    file = ts.createSourceFile(path, content, ts.ScriptTarget.Latest, true, kind);
  } catch (error) {
    if (error instanceof RangeError) throw new TooDeepError();
    throw error;
  }
  const found: Array<string | null> = [];
  const requireUses: string[] = [];
  const literal = (node: import('typescript').Node | undefined) =>
    node && ts.isStringLiteralLike(node) ? node.text : null;
  const visit = (node: import('typescript').Node, depth: number): void => {
    if (depth > MAX_SYNTAX_DEPTH) throw new TooDeepError();
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      found.push(literal(node.moduleSpecifier));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      found.push(literal(node.moduleReference.expression));
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      found.push(literal(node.arguments[0]));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      found.push(literal(node.argument.literal));
    else if (ts.isIdentifier(node) && node.text === 'require' && !requireNameAllowed(ts, node))
      requireUses.push(node.parent.getText(file).slice(0, 60));
    ts.forEachChild(node, (child) => visit(child, depth + 1));
  };
  try {
    visit(file, 0);
  } catch (error) {
    if (error instanceof RangeError) throw new TooDeepError();
    throw error;
  }
  return { specifiers: found, requireUses };
}

/**
 * True where the identifier `require` is harmless: the callee of `require(...)` itself (its
 * argument is checked as an import), a member or declaration name (`x.require`, `{ require: 1 }`),
 * or a type query. Anything else (`require.context`, `(require as any).resolve`, `const r =
 * require`, `(require)("x")`) lets the bundler read files the import check never sees.
 */
function requireNameAllowed(ts: TypeScript, node: import('typescript').Identifier): boolean {
  const parent = node.parent;
  if (ts.isCallExpression(parent)) return parent.expression === node;
  if (ts.isPropertyAccessExpression(parent)) return parent.name === node;
  if (ts.isQualifiedName(parent)) return parent.right === node;
  if (ts.isTypeQueryNode(parent) || ts.isTypeReferenceNode(parent)) return true;
  if (ts.isBindingElement(parent) || ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent))
    return parent.propertyName === node || parent.name === node;
  const named =
    ts.isVariableDeclaration(parent) ||
    ts.isParameter(parent) ||
    ts.isFunctionDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent) ||
    ts.isPropertySignature(parent) ||
    ts.isMethodDeclaration(parent) ||
    ts.isMethodSignature(parent) ||
    ts.isEnumMember(parent) ||
    ts.isGetAccessorDeclaration(parent) ||
    ts.isSetAccessorDeclaration(parent) ||
    ts.isJsxAttribute(parent);
  return named && (parent as { name?: unknown }).name === node;
}

/** Why `specifier`, imported by the file at `path`, is not allowed, or null when it is. */
function importProblem(
  path: string,
  specifier: string | null,
  packages: ReadonlySet<string>,
  sdkModules: readonly SdkModules[] = [],
): string | null {
  if (specifier === null) return 'imports a module whose name is computed; import modules by a literal name';
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    const target = posix.normalize(posix.join(posix.dirname(path), specifier));
    if (target.startsWith('../') || target === '..') return `imports "${specifier}", which is outside the app`;
    if (target.split('/').includes('node_modules'))
      return `imports "${specifier}" through node_modules; import the package by name`;
    return null;
  }
  if (specifier.startsWith('/') || /^[A-Za-z]:/.test(specifier))
    return `imports "${specifier}", an absolute path; import the app's files by a relative path and packages by name`;
  const segments = specifier.split('/');
  if (segments.some((s) => s === '.' || s === '..' || s === '')) {
    return `imports "${specifier}": a package path may not hold "." or ".." segments or an empty one (it would leave the package)`;
  }
  const name = specifier.startsWith('@') ? segments.slice(0, 2).join('/') : segments[0]!;
  if (packages.has(name)) {
    const missing = sdksMissing(sdkModules, specifier);
    if (missing.length === 0) return null;
    const served = sdkModules.map((s) => s.sdk).join(' and ');
    return `imports "${specifier}", which Expo SDK ${missing.join(' and ')} does not have (the app is built for Expo SDK ${served}: use only modules every one of them ships)`;
  }
  return `imports "${specifier}", which is not one of the app's packages (${[...packages].join(', ')}); no package can be installed`;
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * Checks a code answer against `rules` and the workspace on disk. Reads no file contents and
 * writes nothing.
 * @returns the parsed answer, or every problem found (each with where and why).
 */
export function checkCodeAnswer(rules: CodeAnswerRules, message: string): CodeAnswerCheck {
  const text = message.trim();
  if (text.toLowerCase() === SKIP_ANSWER) return { ok: true, answer: SKIP_ANSWER };
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
  const answer: CodeAnswer = {
    summary: parsed.data.summary,
    files: parsed.data.files,
    delete: parsed.data.delete ?? [],
  };
  const issues: CodeAnswerIssue[] = [];
  // The toolchain's TypeScript could not be loaded here: another host may have it.
  let unavailable = false;
  const packages = new Set(rules.packages);
  if (answer.files.length === 0 && answer.delete.length === 0)
    issues.push({ parameter: 'message.files', problem: 'is empty; change at least one file, or answer "skip"' });
  if (answer.files.length > rules.maxFiles)
    issues.push({ parameter: 'message.files', problem: `has ${answer.files.length} files; at most ${rules.maxFiles}` });
  const seen = new Map<string, string>();
  const checkPath = (path: string, where: string, mustExist: boolean): boolean => {
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
    const link = linkOnPath(rules.root, path);
    if (link) {
      issues.push({ parameter: where, problem: `"${path}" ${link}` });
      return false;
    }
    if (mustExist && !exists(join(rules.root, path))) {
      issues.push({ parameter: where, problem: `"${path}" does not exist in the app` });
      return false;
    }
    return true;
  };
  let total = 0;
  answer.files.forEach((file, i) => {
    const where = `message.files[${i}]`;
    if (!checkPath(file.path, `${where}.path`, false)) return;
    if (!file.content.isWellFormed())
      return issues.push({ parameter: `${where}.content`, problem: 'is not valid Unicode text (lone surrogate)' });
    if (CONTENT_CONTROL.test(file.content))
      return issues.push({
        parameter: `${where}.content`,
        problem: 'contains control characters other than tab and line breaks',
      });
    const bytes = byteLength(file.content);
    total += bytes;
    if (bytes > rules.maxFileBytes)
      return issues.push({
        parameter: `${where}.content`,
        problem: `is ${bytes} bytes; a file may have at most ${rules.maxFileBytes}`,
      });
    if (file.path.endsWith('.json')) {
      try {
        JSON.parse(file.content);
      } catch (error) {
        issues.push({ parameter: `${where}.content`, problem: `is not valid JSON (${(error as Error).message})` });
      }
      return;
    }
    let ts: TypeScript;
    try {
      ts = loadTypeScript(rules.typescriptFrom);
    } catch {
      // The toolchain went away (reinstalled elsewhere), or this host builds nothing: refuse
      // rather than let imports through.
      unavailable = true;
      return issues.push({
        parameter: `${where}.content`,
        problem: 'cannot be checked now: the Expo toolchain is not installed on the server (build again once it is)',
      });
    }
    let scan: ImportScan;
    try {
      scan = importsOf(ts, file.path, file.content);
    } catch (error) {
      if (!(error instanceof TooDeepError)) throw error;
      return issues.push({
        parameter: `${where}.content`,
        problem: `${file.path} is nested too deeply to check (more than ${MAX_SYNTAX_DEPTH} levels of expressions, blocks or elements); flatten it`,
      });
    }
    for (const specifier of scan.specifiers) {
      const problem = importProblem(file.path, specifier, packages, rules.sdkModules);
      if (problem) issues.push({ parameter: `${where}.content`, problem: `${file.path} ${problem}` });
    }
    for (const use of scan.requireUses) {
      issues.push({
        parameter: `${where}.content`,
        problem: `${file.path} uses require other than as require("package") (${JSON.stringify(use)}); require.context, require.resolve and aliases of require are not allowed`,
      });
    }
  });
  if (total > rules.maxTotalBytes)
    issues.push({ parameter: 'message.files', problem: `hold ${total} bytes in all; at most ${rules.maxTotalBytes}` });
  answer.delete.forEach((path, i) => checkPath(path, `message.delete[${i}]`, true));
  if (issues.length === 0) return { ok: true, answer };
  const refused = issues.slice(0, 50);
  return unavailable ? { ok: false, issues: refused, unavailable: true } : { ok: false, issues: refused };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
