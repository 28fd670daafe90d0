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
// (@modelcontextprotocol/client) and zod, which the SDK validates every message with. Each plugin
// below trims what the card cannot reach, without changing what the bridge says or checks:
// - appBridgeTrims: esbuild keeps only the zod the bridge uses (the whole namespace was kept),
//   and the bridge's schema descriptions (read only by JSON Schema conversion) are left out;
// - sdkClientTrims: values the SDK computes at load (its spec schema registry) are kept only if
//   read, and the 2026-07-28 wire schemas, which the App bridge never speaks, are left out;
// - pureModuleValues (through the two above and for the SDK's schema module): every module-level
//   value of the SDK and the bridge (message schemas, error classes, tables) is kept only if read;
// - zodUtilTreeShaken: only the helpers of zod's util module that zod calls are kept;
// - noZodJsonSchema: zod's JSON Schema conversion (the card converts no schema) is left out;
// - englishOnly: zod's error messages in English alone;
// - pureSdk: the SDK's modules the bridge does not import are left out;
// and `pure: ['console.debug']` drops the bridge's per-message debug logging.
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
async function patched(path, replacements, why, { pure = false } = {}) {
  let text = await readFile(path, 'utf8');
  for (const [from, to] of replacements) {
    if (!(typeof from === 'string' ? text.includes(from) : text.search(from) !== -1))
      throw new Error(
        `build-card: ${why}: ${String(from)} is no longer in ${path}; review this trim against the new version`,
      );
    text = text.replace(from, to);
  }
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

/** The SDK's message schemas module (@modelcontextprotocol/core), its values kept only if read. */
const pureSdkSchemas = {
  name: 'pure-sdk-schemas',
  setup(b) {
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]core[\\/]dist[\\/]schemas-[\w-]+\.mjs$/ }, async (args) => ({
      contents: pureModuleValues(await readFile(args.path, 'utf8'), args.path),
      loader: 'js',
    }));
  },
};

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
const appBridgeTrims = {
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
        { pure: true },
      ),
    );
  },
};

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
const sdkClientTrims = {
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
        { pure: true },
      ),
    );
  },
};

/**
 * zod's classic schemas import zod's util module as a named re-export of zod's core
 * (`import { util } from "../core/index.js"`), a namespace object used as a value, so esbuild
 * keeps all of util.js. Imported as `import * as util from "../core/util.js"` (the same module
 * namespace), its calls are property reads esbuild tree-shakes to what is called.
 */
const zodUtilTreeShaken = {
  name: 'zod-util-tree-shaken',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]classic[\\/]schemas\.js$/ }, (args) =>
      patched(
        args.path,
        [
          ['import { util } from "../core/index.js";', 'import * as util from "../core/util.js";'],
          [/\bcore\.util\./g, 'util.'],
        ],
        "zod's classic schemas import util from zod's core",
      ),
    );
  },
};

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
 * Builds the card; resolves with the path written, its size in bytes and esbuild's metafile
 * (what each module adds, for `analyzeMetafile`).
 */
export async function buildCard() {
  const bundle = await build({
    entryPoints: [join(root, 'assets/card/card.js')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    // The bridge's transport logs every message it parses at debug level; nothing else is dropped.
    pure: ['console.debug'],
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [englishOnly, pureSdk, pureSdkSchemas, appBridgeTrims, sdkClientTrims, zodUtilTreeShaken, noZodJsonSchema],
  });
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
