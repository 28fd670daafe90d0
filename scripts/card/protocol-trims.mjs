// The esbuild plugins that trim the App bridge (@modelcontextprotocol/ext-apps) and the SDK's
// Protocol under it (@modelcontextprotocol/client, core) in the session card
// (scripts/build-card.mjs): the SDK's modules marked free of side effects (pureSdk), its schema
// module's values kept only if read (pureSdkSchemas), the bridge's zod import and schema
// descriptions (appBridgeTrims), the client's load-time registry and wire eras (sdkClientTrims),
// and in both the methods and accessors nothing calls (pruneUncalledMethods).
import { readFile } from 'node:fs/promises';
import ts from 'typescript';

import { isoTreeShaken, patched, pureModuleValues } from './module-edits.mjs';
import { calledImplicitly } from './usage.mjs';
import { pruneSchemas2025, stubCodec2026 } from './wire-schemas.mjs';

/**
 * The SDK's packages declare no `sideEffects`, so esbuild keeps every module the App bridge's
 * imports reach (the client's HTTP transports, OAuth, ...). Their modules only define things:
 * marked free of side effects, only what the bridge uses stays.
 */
export const pureSdk = {
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

/** The SDK's message schemas module (@modelcontextprotocol/core), its values kept only if read. */
export const pureSdkSchemas = {
  name: 'pure-sdk-schemas',
  setup(b) {
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]core[\\/]dist[\\/]schemas-[\w-]+\.mjs$/ }, async (args) => ({
      contents: pureModuleValues(await isoTreeShaken(b, await readFile(args.path, 'utf8'), args.path), args.path),
      loader: 'js',
    }));
  },
};

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
export const appBridgeTrims = (used) => ({
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
export const sdkClientTrims = (used) => ({
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
