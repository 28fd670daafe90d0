// The session card's source edits (scripts/build-card.mjs): how a trim reads a bundled module and
// rewrites it. patched applies `[from, to]` replacements and fails the build when one no longer
// matches; pureModuleValues makes a module's top-level values removable when unread;
// isoTreeShaken reads zod's ISO formats from zod's own iso module.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/**
 * Reads `path` and applies `[from, to]` replacements, failing the build when one no longer matches;
 * with `pure`, then makes its module-level values removable (pureModuleValues).
 */
export async function patched(path, replacements, why, { pure = false, transform = (s) => s } = {}) {
  let text = await readFile(path, 'utf8');
  for (const [from, to] of replacements) {
    if (!(typeof from === 'string' ? text.includes(from) : text.search(from) !== -1))
      throw new Error(
        `build-card: ${why}: ${String(from)} is no longer in ${path}; review this trim against the new version`,
      );
    text = text.replace(from, to);
  }
  text = await transform(text, path);
  return { contents: pure ? pureModuleValues(text, path) : text, loader: 'js' };
}

/**
 * The SDK's modules (and the App bridge's) define their message schemas, error classes and tables
 * as module-level values built by calls (`z.object(...)`, `Schema.extend(...)`, a class with a
 * static block): esbuild keeps such a value even when nothing reads it, as it cannot know the call
 * is free of side effects, and with it every schema and zod class it reaches. Each module-level
 * `const`/`let`/`var` initializer that is more than a function or a literal is wrapped in an
 * arrow called at once and annotated pure (`/* @__PURE__ *\/ (() => (value))()`): it still runs
 * where and when it ran, if kept; nothing reads it, esbuild drops it. Statements (a loop, a call)
 * are left as they are, and so is an initializer that awaits. `text` is parsed by TypeScript.
 */
export function pureModuleValues(text, path) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const plain = (e) =>
    ts.isArrowFunction(e) ||
    ts.isFunctionExpression(e) ||
    ts.isIdentifier(e) ||
    ts.isLiteralExpression(e) ||
    [ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword, ts.SyntaxKind.NullKeyword].includes(e.kind);
  const awaits = (node) =>
    !ts.isFunctionLike(node) &&
    !ts.isClassStaticBlockDeclaration(node) &&
    (ts.isAwaitExpression(node) || ts.isYieldExpression(node) || ts.forEachChild(node, awaits) === true);
  const edits = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const { initializer } of statement.declarationList.declarations) {
      if (!initializer || plain(initializer) || awaits(initializer)) continue;
      edits.push([initializer.getStart(source), '/* @__PURE__ */ (() => ('], [initializer.end, '))()']);
    }
  }
  let out = text;
  for (const [at, insert] of edits.sort((a, b) => b[0] - a[0])) out = out.slice(0, at) + insert + out.slice(at);
  return out;
}

/**
 * The SDK reads zod's ISO formats as `z.iso.datetime(...)`, a namespace inside zod's namespace:
 * esbuild then keeps every ISO format (date, time, duration). Read as `zodIso.datetime(...)`
 * from zod's own iso module, the calls tree-shake to the formats used. `b` resolves zod as the
 * importer (`path`) does.
 */
export async function isoTreeShaken(b, text, path) {
  if (!/\bz\.iso\./.test(text))
    throw new Error(`build-card: z.iso is no longer read in ${path}; review this trim against the new version`);
  const zod = await b.resolve('zod/v4', { kind: 'import-statement', resolveDir: dirname(path) });
  const iso = join(dirname(zod.path), 'classic/iso.js');
  return `import * as zodIso from ${JSON.stringify(iso)};\n${text.replace(/\bz\.iso\./g, 'zodIso.')}`;
}
