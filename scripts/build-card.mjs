// Builds the MCP Apps session card (src/mcp/app-card.ts) into one self-contained HTML file,
// dist/session-card.html: assets/card/card.js and what it imports (the extension's App bridge)
// bundled by esbuild and inlined into assets/card/card.html. No network, no other file. (Its QR
// codes come drawn from the server, src/mcp/card-qr.ts: the card bundles no QR encoder.)
//
//   node scripts/build-card.mjs             builds it and prints its size in bytes (stderr)
//   node scripts/build-card.mjs --analyze   also prints what each module adds (esbuild's
//                                           analyzeMetafile), the way to find what to trim next
//
// The bytes are the App bridge of @modelcontextprotocol/ext-apps, the SDK's Protocol under it
// (@modelcontextprotocol/client) and zod, which the SDK validates every message with. Each trim
// below leaves out what the card cannot reach, without changing what the bridge says or checks
// on any path the card takes; what is left out of a reachable object (a method, a schema of a
// method) is replaced by a function that throws, so a path that reached it fails loudly:
// - appBridgeTrims: esbuild keeps only the zod the bridge uses (the whole namespace was kept),
//   and the bridge's schema descriptions (read only by JSON Schema conversion) are left out;
// - sdkClientTrims: values the SDK computes at load (its spec schema registry) are kept only if
//   read; the 2026-07-28 wire schemas and codec, which the App bridge never speaks, are left out
//   (stubCodec2026); of the 2025-11-25 schemas, those of the methods the card's code names
//   (pruneSchemas2025, namedMethods);
// - pruneUncalledMethods (through the two above): the bridge's and the Protocol's methods and
//   accessors that no code in the card calls or reads (calledNames, accessedNames);
// - pureModuleValues (through the two above and for the SDK's schema module): every module-level
//   value of the SDK and the bridge (message schemas, error classes, tables) is kept only if read;
// - zodUtilTreeShaken: only the helpers of zod's util module that zod calls are kept, zod's
//   classic methods that nothing calls are left out (pruneZodMethods), and so is the object JIT
//   (the bridge sets zod `jitless`) and each type's JSON Schema hook;
// - isoTreeShaken: only the ISO formats the SDK reads (`z.iso.datetime`);
// - noZodJsonSchema: zod's JSON Schema conversion (the card converts no schema) is left out;
// - englishOnly: zod's error messages in English alone;
// - pureSdk: the SDK's modules the bridge does not import are left out;
// and `pure: ['console.debug']` drops the bridge's per-message debug logging, and `mangleProps`
// shortens the `_` members read on `this` (privateMembers). What a trim keeps is learned from
// the code itself: builds not minified run until the code kept stops shrinking (buildCard).
import { analyzeMetafile, build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * zod's namespace of every locale (about 230 KB minified, kept whole because the SDK imports
 * zod as a namespace) becomes English alone: the card never shows a zod message in another
 * language, and English is zod's default.
 */
const englishOnly = {
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
 * The SDK's packages declare no `sideEffects`, so esbuild keeps every module the App bridge's
 * imports reach (the client's HTTP transports, OAuth, ...). Their modules only define things:
 * marked free of side effects, only what the bridge uses stays.
 */
const pureSdk = {
  name: 'pure-sdk',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.pure || args.namespace !== 'file') return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { pure: true },
      });
      if (
        resolved.errors.length > 0 ||
        !/[\\/]node_modules[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(resolved.path)
      )
        return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/**
 * Reads `path` and applies `[from, to]` replacements, failing the build when one no longer matches;
 * with `pure`, then makes its module-level values removable (pureModuleValues).
 */
async function patched(path, replacements, why, { pure = false, transform = (s) => s } = {}) {
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
function pureModuleValues(text, path) {
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
async function isoTreeShaken(b, text, path) {
  if (!/\bz\.iso\./.test(text))
    throw new Error(`build-card: z.iso is no longer read in ${path}; review this trim against the new version`);
  const zod = await b.resolve('zod/v4', { kind: 'import-statement', resolveDir: dirname(path) });
  const iso = join(dirname(zod.path), 'classic/iso.js');
  return `import * as zodIso from ${JSON.stringify(iso)};\n${text.replace(/\bz\.iso\./g, 'zodIso.')}`;
}

/** The SDK's message schemas module (@modelcontextprotocol/core), its values kept only if read. */
const pureSdkSchemas = {
  name: 'pure-sdk-schemas',
  setup(b) {
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]core[\\/]dist[\\/]schemas-[\w-]+\.mjs$/ }, async (args) => ({
      contents: pureModuleValues(await isoTreeShaken(b, await readFile(args.path, 'utf8'), args.path), args.path),
      loader: 'js',
    }));
  },
};

/**
 * Whether the language calls a member of this name without the code naming it: a computed name
 * (`[Symbol.hasInstance]` for `instanceof`, `[Symbol.iterator]`, ...), `toJSON`, `toString`,
 * `valueOf`, `then`, `constructor`. pruneUncalledMethods and pruneZodMethods keep those.
 */
function calledImplicitly(nameNode, name) {
  return ts.isComputedPropertyName(nameNode) || /^(toJSON|toString|valueOf|then|constructor)$/.test(name);
}

/**
 * The App bridge's classes (ext-apps' app.js: the App, its transport) and the SDK's Protocol carry
 * a method for every request the extension and MCP define (open a link, download a file, send a
 * log, read a resource, sample, ...), and the App an `on...` accessor for each thing a host
 * tells it; the card uses a few. A method of a class in `text` that no bundled code calls or
 * reads (`used.called`, calledNames), or an accessor whose name no bundled code reads or sets
 * (`used.accessed`, accessedNames), becomes one that throws if used, so what only it reached
 * (its schemas, its helpers) drops. Constructors and `#` members stay.
 * `text` is parsed by TypeScript; `needed` is the least number of classes it must find.
 */
function pruneUncalledMethods(text, path, used, needed) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const edits = [];
  let classes = 0;
  const visit = (node) => {
    if (ts.isClassLike(node)) {
      classes += 1;
      for (const member of node.members) {
        const accessor = ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member);
        if (!(accessor || ts.isMethodDeclaration(member)) || !member.body || ts.isPrivateIdentifier(member.name))
          continue;
        const name = member.name.getText(source).replace(/^["']|["']$/g, '');
        if (calledImplicitly(member.name, name) || (accessor ? used.accessed : used.called).has(name)) continue;
        edits.push([member.body.getStart(source), member.body.end, '{methodNotBundled()}']);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (classes < needed)
    throw new Error(
      `build-card: the classes looked for are no longer in ${path}; review this trim against the new version`,
    );
  let out = text;
  for (const [start, end, insert] of edits.sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + insert + out.slice(end);
  return `${out}\nfunction methodNotBundled() {\n\tthrow new Error("This method is not bundled in the session card (scripts/build-card.mjs): nothing in the card calls it");\n}\n`;
}

/**
 * Two trims of the App bridge's own module (ext-apps' dist/src/app.js):
 * - it imports zod as `import { z } from "zod/v4"`, a namespace object used as a value: esbuild
 *   then keeps all of zod (JSON Schema import, the schema compiler, every format check; about
 *   90 KB). Imported as `import * as z`, the same calls are property reads of the module
 *   namespace, which esbuild tree-shakes to what is called;
 * - its message schemas carry their documentation as `.describe("...")` (about 9 KB): zod keeps a
 *   description only for JSON Schema conversion, which is not bundled (noZodJsonSchema below), and
 *   validation never reads it. The calls on a plain string literal are removed.
 * Then its schemas are kept only if read (pureModuleValues).
 */
const appBridgeTrims = (used) => ({
  name: 'app-bridge-trims',
  setup(b) {
    const literal = /\.describe\(("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\$]|\\.|\$(?!\{))*`)\)/g;
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]ext-apps[\\/]dist[\\/]src[\\/]app\.js$/ }, (args) =>
      patched(
        args.path,
        [
          [/import\{z as (\w+)\}from"zod\/v4"/g, 'import*as $1 from"zod/v4"'],
          [literal, ''],
        ],
        'the App bridge imports zod as `{ z }` and describes its schemas',
        { pure: true, transform: (text, path) => (used ? pruneUncalledMethods(text, path, used, 3) : text) },
      ),
    );
  },
});

/** The comment esbuild heads each module's code with in an output not minified (`// node_modules/...`). */
const MODULE_HEADER = /^\s*\/\/ (?=(?:node_modules|assets|[\w-]+:)[\\/]\S*$)/m;

/**
 * The MCP methods the card's code names (`"tools/call"`, `"ping"`, ...: string literals but
 * `case` labels) in
 * `text`, a build's output not minified, outside the SDK's own modules (whose tables name them
 * all); with those the SDK's Protocol handles itself in every connection (ping, cancellation,
 * progress). What the App bridge can send or handle: pruneSchemas2025 keeps their schemas.
 */
function namedMethods(text) {
  const methods = new Set(['ping', 'notifications/cancelled', 'notifications/progress']);
  const regions = text.split(MODULE_HEADER);
  for (const region of regions) {
    if (/^(node_modules[\\/]@modelcontextprotocol[\\/](client|core)[\\/])/.test(region)) continue;
    // A `case "..."` label only compares a method (the App's capability checks): it neither
    // sends one nor handles one.
    for (const m of region.matchAll(/(?<!\bcase\s*)["'`]((?:[a-z]+\/)+[a-z_]+|ping)["'`]/g)) methods.add(m[1]);
  }
  return methods;
}

/**
 * The SDK client's 2025-11-25 wire schemas, built on first use by one function (`build$1`, returned
 * by `buildSchemas2025`) and looked up by method in `registryMaps`: every spec method's request,
 * notification and result schema. The card keeps the schemas of `methods` (namedMethods; all
 * if undefined), and every schema they are built from; a method outside them keeps its place
 * in the codec's tables of names, and a lookup of its schema throws (each table of schemas is a
 * Proxy, cardSchemaTable), so a message the bridge was never meant to exchange fails loudly,
 * never passes unchecked. `text` is parsed by TypeScript; the build fails if the shapes looked for are gone.
 */
function pruneSchemas2025(text, path, methods) {
  if (!methods) return text;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const fail = (what) => {
    throw new Error(`build-card: ${what} is no longer in ${path}; review this trim against the new version`);
  };
  const fn = (name) => source.statements.find((s) => ts.isFunctionDeclaration(s) && s.name?.text === name);
  const memo = /return [\w$]+\s*\?\?=\s*([\w$]+)\(\)/.exec(fn('buildSchemas2025')?.getText(source) ?? '');
  const builder = memo ? fn(memo[1]) : undefined;
  const registry = fn('registryMaps');
  const returned = builder?.body.statements.at(-1);
  if (
    !builder ||
    !registry ||
    !returned ||
    !ts.isReturnStatement(returned) ||
    !ts.isObjectLiteralExpression(returned.expression)
  )
    fail('the 2025-11-25 schema builder (buildSchemas2025, registryMaps)');
  const built = new Map(returned.expression.properties.map((p) => [p.name.text, p]));
  const edits = [];
  const kept = new Set();
  // registryMaps: `method: s.Schema` in its three tables.
  let tables = 0;
  const visitRegistry = (node) => {
    if (ts.isPropertyAssignment(node) && /^(request|notification|result)Schemas$/.test(node.name.getText(source))) {
      tables += 1;
      for (const entry of node.initializer.properties) {
        const method = entry.name.text;
        const schema = entry.initializer.name.text;
        if (!built.has(schema)) fail(`registryMaps' schema ${schema}`);
        if (methods.has(method)) kept.add(schema);
        else edits.push([entry.getFullStart(), entry.end + (text[entry.end] === ',' ? 1 : 0), '']);
      }
      edits.push([node.initializer.getStart(source), node.initializer.getStart(source), 'cardSchemaTable(']);
      edits.push([node.initializer.end, node.initializer.end, ')']);
      return;
    }
    ts.forEachChild(node, visitRegistry);
  };
  visitRegistry(registry);
  if (tables !== 3) fail("registryMaps' three tables");
  // The codec's sampling result variants, read for sampling/createMessage alone: kept with it, or
  // a function that throws.
  const variant = source.statements
    .filter(ts.isVariableStatement)
    .flatMap((s) => s.declarationList.declarations)
    .find((d) => d.name.getText(source) === 'rev2025Codec')
    ?.initializer?.properties?.find((p) => p.name?.getText(source) === 'samplingResultVariant');
  if (!variant || !ts.isPropertyAssignment(variant)) fail("rev2025Codec's samplingResultVariant");
  // The codec's encoding of a tools/list result the App would answer with (its tools' output
  // schemas, wrapped for 2025-11-25): kept with tools/list.
  const encode = variant.parent.properties.find((p) => p.name?.getText(source) === 'encodeResult');
  if (!encode || !ts.isMethodDeclaration(encode)) fail("rev2025Codec's encodeResult");
  if (!methods.has('tools/list'))
    edits.push([
      encode.getStart(source),
      encode.end,
      'encodeResult: (method, result) => (method === "tools/list" ? cardUnbundledSchema(method) : result)',
    ]);
  if (!methods.has('sampling/createMessage'))
    edits.push([
      variant.initializer.getStart(source),
      variant.initializer.end,
      '() => cardUnbundledSchema("sampling/createMessage")',
    ]);
  // The other reads of a built schema: `s.Schema` in a function that holds
  // `const s = buildSchemas2025()`, the registry aside.
  const visitReads = (node, reading) => {
    if (node === registry || (node === variant && !methods.has('sampling/createMessage'))) return;
    if (ts.isFunctionLike(node))
      reading = node.body !== undefined && /\bconst s = buildSchemas2025\(\)/.test(node.body.getText(source));
    if (
      reading &&
      ts.isPropertyAccessExpression(node) &&
      node.expression.getText(source) === 's' &&
      built.has(node.name.text)
    )
      kept.add(node.name.text);
    ts.forEachChild(node, (child) => visitReads(child, reading));
  };
  visitReads(source, false);
  // The builder's locals the kept schemas are built from.
  const locals = new Map();
  for (const statement of builder.body.statements)
    if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations) locals.set(d.name.text, statement);
  const reached = new Set();
  const walk = (node) => {
    if (ts.isIdentifier(node) && locals.has(node.text) && !reached.has(node.text)) {
      reached.add(node.text);
      walk(locals.get(node.text));
    }
    ts.forEachChild(node, walk);
  };
  for (const name of kept) walk(built.get(name));
  for (const [name, property] of built)
    if (!kept.has(name)) edits.push([property.getFullStart(), property.end + (text[property.end] === ',' ? 1 : 0), '']);
  for (const [name, statement] of locals)
    if (!reached.has(name) && statement.declarationList.declarations.length === 1)
      edits.push([statement.getFullStart(), statement.end, '']);
  let out = text;
  for (const [start, end, insert] of edits.sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + insert + out.slice(end);
  return `${out}\nfunction cardSchemaTable(table) {\n\treturn new Proxy(table, { get: (t, method) => (method in t ? t[method] : cardUnbundledSchema(method)) });\n}\nfunction cardUnbundledSchema(method) {\n\tthrow new Error(\`The 2025-11-25 schema of \${method} is not bundled in the session card (scripts/build-card.mjs): its App bridge never sends or handles it\`);\n}\n`;
}

/**
 * The SDK client's 2026-07-28 codec (`rev2026Codec`): the Protocol asks every codec whether a
 * method is the spec's (`hasRequestMethod`, `hasNotificationMethod`) and reads its `era` to name
 * an incoming message's era; it validates, encodes or decodes with it only on a connection that
 * negotiated 2026-07-28, which the App bridge never does (sdkClientTrims). Those three members
 * stay; every other one becomes a function that throws, so a path that reached it would fail
 * loudly. `text` is parsed by TypeScript; the build fails if the codec is gone.
 */
function stubCodec2026(text, path) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const declaration = source.statements
    .filter(ts.isVariableStatement)
    .flatMap((s) => s.declarationList.declarations)
    .find((d) => d.name.getText(source) === 'rev2026Codec');
  const codec = declaration?.initializer;
  if (!codec || !ts.isObjectLiteralExpression(codec))
    throw new Error(`build-card: rev2026Codec is no longer in ${path}; review this trim against the new version`);
  const kept = new Set(['era', 'hasRequestMethod', 'hasNotificationMethod']);
  const edits = codec.properties
    .filter((p) => !kept.has(p.name.getText(source)))
    .map((p) => [p.getStart(source), p.end, `${p.name.getText(source)}: cardUnbundledCodec2026`]);
  let out = text;
  for (const [start, end, insert] of edits.sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + insert + out.slice(end);
  return `${out}\nfunction cardUnbundledCodec2026() {\n\tthrow new Error("The 2026-07-28 codec is not bundled in the session card (scripts/build-card.mjs): its App bridge speaks the 2025-11-25 codec");\n}\n`;
}

/**
 * Two trims of the SDK client's module (the Protocol the App bridge extends), then its
 * module-level values kept only if read (pureModuleValues):
 * - it builds, when it loads, a registry of every spec and OAuth schema (`specTypeSchemas`,
 *   `isSpecType`: public helpers for validating a spec type), which keeps all of them and the
 *   OAuth module. The same code runs instead on the registry's first read: unread, dropped;
 * - the Protocol validates each message with the schemas of its connection's wire era, chosen by
 *   the protocol version that connection negotiated. Only the SDK's `Client.connect` and server
 *   initialize record one, and the card bundles neither: the App bridge's handshake is its own
 *   `ui/initialize`, so its version stays unset and every message it sends or receives is
 *   checked by the 2025-11-25 codec, whose schemas stay whole. The 2026-07-28 schema set (about
 *   15 KB) is reachable only through an unset version's `server/discover`, which the bridge never
 *   sends: its builder throws instead, so a path that reached it would fail loudly, never pass
 *   unchecked.
 */
const sdkClientTrims = (used) => ({
  name: 'sdk-client-trims',
  setup(b) {
    const loops =
      'for (const key of SPEC_SCHEMA_KEYS) register(key, schemas_exports[key]);\nfor (const [key, schema] of Object.entries(authSchemas)) register(key, schema);\n';
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]client[\\/]dist[\\/]src-[\w-]+\.mjs$/ }, (args) =>
      patched(
        args.path,
        [
          [
            loops,
            `let registered = false;\nfunction registerAll() {\nif (registered) return;\nregistered = true;\n${loops}}\n`,
          ],
          [
            'const specTypeSchemas = Object.freeze(_specTypeSchemas);',
            'const specTypeSchemas = (registerAll(), Object.freeze(_specTypeSchemas));',
          ],
          [
            'const isSpecType = Object.freeze(_isSpecType);',
            'const isSpecType = (registerAll(), Object.freeze(_isSpecType));',
          ],
          [
            /function buildSchemas2026\(\) \{\s*return memo \?\?= build\(\);\s*\}/,
            'function buildSchemas2026() {\n\tthrow new Error("The 2026-07-28 wire schemas are not bundled in the session card (scripts/build-card.mjs): its App bridge speaks the 2025-11-25 codec");\n}',
          ],
        ],
        "the SDK client's module-level values and its wire eras",
        {
          pure: true,
          transform: async (text, path) => {
            const trimmed = stubCodec2026(
              pruneSchemas2025(await isoTreeShaken(b, text, path), path, used?.methods),
              path,
            );
            return used ? pruneUncalledMethods(trimmed, path, used, 1) : trimmed;
          },
        },
      ),
    );
  },
});

/**
 * The method names the card's code calls (`.name(`, `?.name(`, `.name.call(`, `["name"]`) in
 * `text`, a build's output not minified, and the members it reads on its own instances
 * (`this.name`, `inst.name`): what pruneZodMethods and pruneUncalledMethods keep. In zod's core
 * (and its locales) only the latter count: the core is written against zod's internals and
 * calls no method of the classic schemas, the SDK or the bridge, and its own `.includes(`,
 * `.startsWith(`, ... are those of strings and arrays.
 */
function calledNames(text) {
  const names = new Set();
  const own = /\b(?:this|inst)\.([A-Za-z_$][\w$]*)/g;
  const calls = [
    /(?:\?\.|\.)\s*([A-Za-z_$][\w$]*)\s*(?:\(|\.(?:call|apply|bind)\()/g,
    /\[\s*["'`]([\w$~]+)["'`]\s*\]/g,
  ];
  for (const region of text.split(MODULE_HEADER)) {
    const core = /^node_modules[\\/]zod[\\/]v4[\\/](core|locales)[\\/]/.test(region);
    for (const pattern of core ? [own] : [own, ...calls]) for (const m of region.matchAll(pattern)) names.add(m[1]);
  }
  return names;
}

/**
 * The SDK's, the bridge's and zod's internal members, named `_...` and read on `this`
 * (`this._transport`, `this._responseHandlers`, ...) in `text`: esbuild's mangleProps gives them
 * short names. Left out are the names that cross the bundle's edge or are spelled as strings
 * somewhere: `_meta` (MCP's wire field), `_zod` (zod defines it by name), `_errors` (zod's
 * formatted errors), `_def`, `__...`, and any other name `text` spells in quotes.
 */
function privateMembers(text) {
  const quoted = new Set([...text.matchAll(/["'`](_[\w$]+)["'`]/g)].map((m) => m[1]));
  const members = new Set();
  for (const m of text.matchAll(/\bthis\.(_[A-Za-z][\w$]*)/g))
    if (!/^(_meta|_zod|_errors|_def)$/.test(m[1]) && !quoted.has(m[1])) members.add(m[1]);
  return members;
}

/** The property names `text` reads or sets (`.name`, `["name"]`): the accessors pruneUncalledMethods keeps. */
function accessedNames(text) {
  const names = new Set();
  for (const m of text.matchAll(/\.\s*([A-Za-z_$][\w$]*)|\[\s*["'`]([\w$~]+)["'`]\s*\]/g)) names.add(m[1] ?? m[2]);
  return names;
}

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
const zodUtilTreeShaken = (used) => ({
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
const noZodJsonSchema = {
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

/**
 * One esbuild run over the card's script; `used`: what the last build not minified reached
 * (buildCard), undefined for the first.
 */
function bundleCard({ minify, used }) {
  return build({
    entryPoints: [join(root, 'assets/card/card.js')],
    bundle: true,
    minify,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    // The members the code reads on `this` named `_...` (privateMembers) get short names, as
    // local variables do.
    ...(minify &&
      used?.members.size > 0 && {
        mangleProps: new RegExp(`^(${[...used.members].map((m) => m.replaceAll('$', '\\$')).join('|')})$`),
      }),
    // The bridge's transport logs every message it parses at debug level; nothing else is dropped.
    pure: ['console.debug'],
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [
      englishOnly,
      pureSdk,
      pureSdkSchemas,
      appBridgeTrims(used),
      sdkClientTrims(used),
      zodUtilTreeShaken(used),
      noZodJsonSchema,
    ],
  });
}

/**
 * Builds the card; resolves with the path written, its size in bytes and esbuild's metafile
 * (what each module adds, for `analyzeMetafile`).
 */
export async function buildCard() {
  // Builds not minified give the code kept and so the methods it calls (calledNames); each next
  // build keeps only those, so keeps a part of the code before it: until that stops shrinking.
  let used;
  for (let size = Infinity; ;) {
    const text = (await bundleCard({ minify: false, used })).outputFiles[0].text;
    if (text.length >= size) break;
    size = text.length;
    used = {
      called: calledNames(text),
      accessed: accessedNames(text),
      methods: namedMethods(text),
      members: privateMembers(text),
    };
  }
  const bundle = await bundleCard({ minify: true, used });
  const script = bundle.outputFiles[0].text.replaceAll('</script', '<\\/script');
  const template = await readFile(join(root, 'assets/card/card.html'), 'utf8');
  const html = template.replace('/*CARD_SCRIPT*/', () => script);
  const out = join(root, 'dist/session-card.html');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, html);
  return { path: out, bytes: Buffer.byteLength(html), metafile: bundle.metafile };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { path, bytes, metafile } = await buildCard();
  if (process.argv.includes('--analyze')) process.stderr.write(await analyzeMetafile(metafile));
  process.stderr.write(`${path}: ${bytes} bytes\n`);
}
