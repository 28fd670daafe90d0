/**
 * The content stage of a code answer's checks (docs/builders.md "Code questions"): what one written
 * file's text must pass once its path has passed, for `checkCodeAnswer` in `code-answer.ts`. Text
 * and size for every file, JSON syntax for `.json`, and for TypeScript every import and use of
 * `require`, read from the syntax tree with the toolchain's own `typescript` (docs/security.md).
 */
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { sdksMissing, type SdkModules } from './sdk-modules.js';

/** One reason an answer was refused: `parameter` is where (`message.files[1].path`), `problem` why. */
export interface CodeAnswerIssue {
  parameter: string;
  problem: string;
}

/** The part of a question's `CodeAnswerRules` the content of one file is checked against. */
export interface ContentRules {
  /** Most UTF-8 bytes of one file. */
  maxFileBytes: number;
  /** A `node_modules` folder holding `typescript`, used to read imports from the syntax tree. */
  typescriptFrom: string;
  /** Packages the app may import (the template's dependencies); subpaths (`pkg/x`) are allowed. */
  packages: ReadonlySet<string>;
  /** Every served SDK's packages: a package import must resolve in each (absent: not checked). */
  sdkModules?: readonly SdkModules[];
}

// Source text may hold tabs and line breaks, nothing else below U+0020 (it keeps the answer's
// JSON escaping at most 4 bytes per character: see docs/builders.md "Code questions").
// eslint-disable-next-line no-control-regex
const CONTENT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Checks the content of the file written at `path` (already checked), in order: well-formed
 * Unicode, control characters, size, then JSON syntax (`.json`) or imports (`sourceIssues`).
 * @param options.where the issues' parameter (`message.files[0].content`).
 * @returns the issues found (the checks stop at the first failing one, except the import checks,
 *   which report every bad import); `bytes`, the file's UTF-8 size, or 0 when its text was refused
 *   before it was measured (it counts towards the answer's total even when too large); and
 *   `unavailable` when the toolchain's TypeScript could not be loaded here.
 */
export function contentIssues(options: { path: string; content: string; where: string; rules: ContentRules }): {
  issues: CodeAnswerIssue[];
  bytes: number;
  unavailable: boolean;
} {
  const { path, content, where, rules } = options;
  const refuse = (problem: string) => ({ issues: [{ parameter: where, problem }], bytes: 0, unavailable: false });
  if (!content.isWellFormed()) return refuse('is not valid Unicode text (lone surrogate)');
  if (CONTENT_CONTROL.test(content)) return refuse('contains control characters other than tab and line breaks');
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > rules.maxFileBytes)
    return { ...refuse(`is ${bytes} bytes; a file may have at most ${rules.maxFileBytes}`), bytes };
  if (path.endsWith('.json')) {
    try {
      JSON.parse(content);
    } catch (error) {
      return { ...refuse(`is not valid JSON (${(error as Error).message})`), bytes };
    }
    return { issues: [], bytes, unavailable: false };
  }
  return { ...sourceIssues({ path, content, where, rules }), bytes };
}

/**
 * The import checks of a TypeScript file: it is parsed with the toolchain's `typescript` (from
 * `rules.typescriptFrom`), and each import (`importProblem`) and each use of `require` other than
 * `require("x")` is an issue at `options.where`, prefixed with the file's path.
 * @returns the issues; `unavailable` (with its one issue) when the toolchain's TypeScript cannot
 *   be loaded; one issue when the file nests deeper than `MAX_SYNTAX_DEPTH`.
 * @throws whatever else the parser throws.
 */
function sourceIssues(options: { path: string; content: string; where: string; rules: ContentRules }): {
  issues: CodeAnswerIssue[];
  unavailable: boolean;
} {
  const { path, where, rules } = options;
  let ts: TypeScript;
  try {
    ts = loadTypeScript(rules.typescriptFrom);
  } catch {
    // The toolchain went away (reinstalled elsewhere), or this host builds nothing: refuse
    // rather than let imports through.
    return {
      issues: [
        {
          parameter: where,
          problem: 'cannot be checked now: the Expo toolchain is not installed on the server (build again once it is)',
        },
      ],
      unavailable: true,
    };
  }
  let scan: ImportScan;
  try {
    scan = importsOf(ts, path, options.content);
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    return {
      issues: [
        {
          parameter: where,
          problem: `${path} is nested too deeply to check (more than ${MAX_SYNTAX_DEPTH} levels of expressions, blocks or elements); flatten it`,
        },
      ],
      unavailable: false,
    };
  }
  const issues: CodeAnswerIssue[] = [];
  for (const specifier of scan.specifiers) {
    const problem = importProblem(path, specifier, rules.packages, rules.sdkModules);
    if (problem) issues.push({ parameter: where, problem: `${path} ${problem}` });
  }
  for (const use of scan.requireUses) {
    issues.push({
      parameter: where,
      problem: `${path} uses require other than as require("package") (${JSON.stringify(use)}); require.context, require.resolve and aliases of require are not allowed`,
    });
  }
  return { issues, unavailable: false };
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
