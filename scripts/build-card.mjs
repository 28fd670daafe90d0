// Builds the MCP Apps session card (src/mcp/app-card.ts) into one self-contained HTML file,
// dist/session-card.html: assets/card/card.js and what it imports (the extension's App bridge,
// qrcode's QR encoder) bundled by esbuild and inlined into assets/card/card.html. No network, no
// other file.
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
// - lazySdkValues: values the SDK computes at load (its spec schema registry, its server's
//   input helper) are kept only if read;
// - noZodJsonSchema: zod's JSON Schema conversion (the card converts no schema) is left out;
// - englishOnly: zod's error messages in English alone;
// - pureSdk: the SDK's modules the bridge does not import are left out;
// and `pure: ['console.debug']` drops the bridge's per-message debug logging.
import { analyzeMetafile, build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/** Reads `path` and applies `[from, to]` replacements, failing the build when one no longer matches. */
async function patched(path, replacements, why) {
  let text = await readFile(path, 'utf8');
  for (const [from, to] of replacements) {
    if (!(typeof from === 'string' ? text.includes(from) : text.search(from) !== -1))
      throw new Error(
        `build-card: ${why}: ${String(from)} is no longer in ${path}; review this trim against the new version`,
      );
    text = text.replace(from, to);
  }
  return { contents: text, loader: 'js' };
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
      ),
    );
  },
};

/**
 * The SDK's client computes, when its module loads, values the App bridge never reads, and
 * esbuild keeps a value computed by a call, with all it reaches:
 * - a registry of every spec and OAuth schema (`specTypeSchemas`, `isSpecType`: public helpers
 *   for validating a spec type), which keeps all of them and the OAuth module. The same code
 *   runs instead on the registry's first read, through an annotated-pure call: unread, dropped;
 * - `inputRequired` (a server's helper to ask its client for input) and two elicitation
 *   constants read from schemas, which keep the elicitation schema checks and zod's JSON Schema
 *   conversion: their calls are annotated pure, so they stay only if read.
 */
const lazySdkValues = {
  name: 'lazy-sdk-values',
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
            'const specTypeSchemas = /* @__PURE__ */ (() => (registerAll(), Object.freeze(_specTypeSchemas)))();',
          ],
          [
            'const isSpecType = Object.freeze(_isSpecType);',
            'const isSpecType = /* @__PURE__ */ (() => (registerAll(), Object.freeze(_isSpecType)))();',
          ],
          ['const ROOT_KEYS = new Set(', 'const ROOT_KEYS = /* @__PURE__ */ new Set('],
          ['const SUPPORTED_STRING_FORMATS = new Set(', 'const SUPPORTED_STRING_FORMATS = /* @__PURE__ */ new Set('],
          ['const inputRequired = Object.assign(', 'const inputRequired = /* @__PURE__ */ Object.assign('],
        ],
        "the SDK client's module-level values",
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
    plugins: [englishOnly, pureSdk, appBridgeTrims, lazySdkValues, noZodJsonSchema],
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
