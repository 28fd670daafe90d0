// The esbuild plugins that trim zod in the session card (scripts/build-card.mjs): its messages in
// English alone (englishOnly), its util module tree-shaken, its object JIT and JSON Schema hooks
// left out and its classic methods nothing calls stubbed (zodUtilTreeShaken, pruneZodMethods),
// and its JSON Schema conversion left out (noZodJsonSchema).
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

import { patched } from './module-edits.mjs';
import { calledImplicitly } from './usage.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * zod's namespace of every locale (about 230 KB minified, kept whole because the SDK imports
 * zod as a namespace) becomes English alone: the card never shows a zod message in another
 * language, and English is zod's default.
 */
export const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '../locales/en.js'), namespace: 'zod-en' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: root,
    }));
  },
};

/**
 * zod's classic schemas put their methods on each schema type's prototype (`$constructor`'s third
 * argument, `util.derived`'s second): every string format (`email`, `jwt`, `cidrv6`, ...), every
 * wrapper (`catch`, `prefault`, `readonly`, ...), each reaching its schema class, its checks and
 * its regular expressions, so esbuild keeps all of them. A method no bundled module calls (`used`,
 * calledNames) becomes `zodMethodNotBundled`, which throws if called: its classes drop. Getters,
 * setters and `~`/`_` members stay. `text` is parsed by TypeScript.
 */
function pruneZodMethods(text, path, used) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const tables = [];
  const visit = (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText(source);
      const table =
        callee === 'core.$constructor' ? node.arguments[2] : callee === 'util.derived' ? node.arguments[1] : undefined;
      if (table && ts.isObjectLiteralExpression(table)) tables.push(table);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (tables.length < 10)
    throw new Error(
      `build-card: zod's classic method tables are no longer in ${path}; review this trim against the new version`,
    );
  const edits = [];
  for (const table of tables)
    for (const member of table.properties) {
      if (!(ts.isMethodDeclaration(member) || ts.isPropertyAssignment(member))) continue;
      const name = member.name.getText(source).replace(/^["']|["']$/g, '');
      if (calledImplicitly(member.name, name) || used.has(name) || /^[~_]/.test(name)) continue;
      if (ts.isPropertyAssignment(member) && !ts.isFunctionLike(member.initializer)) continue;
      edits.push([member.getStart(source), member.end, `${member.name.getText(source)}: zodMethodNotBundled`]);
    }
  let out = text;
  for (const [start, end, insert] of edits.sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + insert + out.slice(end);
  return `${out}\nfunction zodMethodNotBundled() {\n\tthrow new Error("This zod method is not bundled in the session card (scripts/build-card.mjs): nothing in the card calls it");\n}\n`;
}

/**
 * zod's classic schemas import zod's util module as a named re-export of zod's core
 * (`import { util } from "../core/index.js"`), a namespace object used as a value, so esbuild
 * keeps all of util.js. Imported as `import * as util from "../core/util.js"` (the same module
 * namespace), its calls are property reads esbuild tree-shakes to what is called.
 */
export const zodUtilTreeShaken = (used) => ({
  name: 'zod-util-tree-shaken',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]classic[\\/]schemas\.js$/ }, (args) =>
      patched(
        args.path,
        [
          ['import { util } from "../core/index.js";', 'import * as util from "../core/util.js";'],
          [/\bcore\.util\./g, 'util.'],
          // The App bridge sets zod's `jitless` (its `allowUnsafeEval` option, which the card leaves
          // off): an object schema then parses as zod's plain $ZodObject does, and its compiler
          // (the JIT object, zod's Doc) never runs. Built as a plain $ZodObject, it is not bundled.
          ['core.$ZodObjectJIT.init(inst, def);', 'core.$ZodObject.init(inst, def);'],
          // Each schema type's JSON Schema hook, read only by zod's JSON Schema conversion, which is
          // not bundled (noZodJsonSchema).
          [/^\s*inst\._zod\.processJSONSchema = \(ctx, json, params\) => [^\n]*;\n/gm, ''],
        ],
        "zod's classic schemas import util from zod's core and build objects with the JIT",
        { transform: (text, path) => (used ? pruneZodMethods(text, path, used.called) : text) },
      ),
    );
  },
});

/**
 * zod's classic schemas carry a JSON Schema converter for each type (`toJSONSchema()`, the
 * Standard JSON Schema `jsonSchema` of `~standard`; about 20 KB). The card converts no schema
 * to JSON Schema (the SDK does so to list tools and to elicit, which the card does neither of):
 * the converter modules become stubs that throw if called, save `aggregateChecks`, which
 * zod's `minLength`/`format` getters read and which stays zod's own.
 */
export const noZodJsonSchema = {
  name: 'no-zod-json-schema',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/core\/(json-schema-processors|to-json-schema)\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]classic[\\/]schemas\.js$/.test(args.importer)
        ? { path: join(dirname(args.importer), args.path), namespace: 'zod-no-json-schema' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-no-json-schema' }, async (args) => {
      const names = Object.keys(await import(pathToFileURL(args.path).href));
      const kept = names.filter((name) => name === 'aggregateChecks');
      const lines = [
        'const unbundled = (name) => () => { throw new Error(`zod JSON Schema conversion (${name}) is not bundled in the session card`); };',
      ];
      if (kept.length > 0) lines.push(`export { ${kept.join(', ')} } from ${JSON.stringify(args.path)};`);
      // A `create...Method` makes the method zod attaches to every schema: it returns the stub.
      for (const name of names.filter((n) => !kept.includes(n)))
        lines.push(
          `export const ${name} = /* @__PURE__ */ ${name.startsWith('create') ? `() => unbundled(${JSON.stringify(name)})` : `unbundled(${JSON.stringify(name)})`};`,
        );
      return { contents: lines.join('\n'), resolveDir: root, loader: 'js' };
    });
  },
};
