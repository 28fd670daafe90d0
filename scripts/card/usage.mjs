// The usage scan of the session card's build (scripts/build-card.mjs): what a build not minified
// (its text, module by module) uses. The method names it calls (calledNames), the properties it
// reads or sets (accessedNames), the MCP methods it names (namedMethods), the `_` members it reads
// on `this` (privateMembers), and the members the language calls without naming them
// (calledImplicitly). The trims keep what these find and leave out the rest.
import ts from 'typescript';

/**
 * The comment esbuild heads each module's code with in an output not minified: the module's path
 * relative to the working folder (`// node_modules/...`, `// ../../elsewhere/node_modules/...` when
 * node_modules is a link to another folder, `// node_modules/.pnpm/zod@4.1.0/node_modules/zod/...`
 * under pnpm), or a plugin's namespace. A region's tests match the package from its last
 * `node_modules/` (inPackage).
 */
const MODULE_HEADER = /^\s*\/\/ (?=(?:\S*node_modules|assets|[\w-]+:)[\\/]\S*$)/m;

/** Whether `region` (a module's code, headed by its path) is a module of package folder `folder` (e.g. `zod[\\/]v4[\\/]core`). */
const inPackage = (region, folder) => new RegExp(`^\\S*node_modules[\\\\/](?:${folder})[\\\\/]`).test(region);

/**
 * Whether the language calls a member of this name without the code naming it: a computed name
 * (`[Symbol.hasInstance]` for `instanceof`, `[Symbol.iterator]`, ...), `toJSON`, `toString`,
 * `valueOf`, `then`, `constructor`. pruneUncalledMethods and pruneZodMethods keep those.
 */
export function calledImplicitly(nameNode, name) {
  return ts.isComputedPropertyName(nameNode) || /^(toJSON|toString|valueOf|then|constructor)$/.test(name);
}

/**
 * The MCP methods the card's code names (`"tools/call"`, `"ping"`, ...: string literals but
 * `case` labels) in
 * `text`, a build's output not minified, outside the SDK's own modules (whose tables name them
 * all); with those the SDK's Protocol handles itself in every connection (ping, cancellation,
 * progress). What the App bridge can send or handle: pruneSchemas2025 keeps their schemas.
 */
export function namedMethods(text) {
  const methods = new Set(['ping', 'notifications/cancelled', 'notifications/progress']);
  const regions = text.split(MODULE_HEADER);
  for (const region of regions) {
    if (inPackage(region, '@modelcontextprotocol[\\\\/](?:client|core)')) continue;
    // A `case "..."` label only compares a method (the App's capability checks): it neither
    // sends one nor handles one.
    for (const m of region.matchAll(/(?<!\bcase\s*)["'`]((?:[a-z]+\/)+[a-z_]+|ping)["'`]/g)) methods.add(m[1]);
  }
  return methods;
}

/**
 * The method names the card's code calls (`.name(`, `?.name(`, `.name.call(`, `["name"]`) in
 * `text`, a build's output not minified, and the members it reads on its own instances
 * (`this.name`, `inst.name`): what pruneZodMethods and pruneUncalledMethods keep. In zod's core
 * (and its locales) only the latter count: the core is written against zod's internals and
 * calls no method of the classic schemas, the SDK or the bridge, and its own `.includes(`,
 * `.startsWith(`, ... are those of strings and arrays.
 */
export function calledNames(text) {
  const names = new Set();
  const own = /\b(?:this|inst)\.([A-Za-z_$][\w$]*)/g;
  const calls = [
    /(?:\?\.|\.)\s*([A-Za-z_$][\w$]*)\s*(?:\(|\.(?:call|apply|bind)\()/g,
    /\[\s*["'`]([\w$~]+)["'`]\s*\]/g,
  ];
  for (const region of text.split(MODULE_HEADER)) {
    const core = inPackage(region, 'zod[\\\\/]v4[\\\\/](?:core|locales)');
    for (const pattern of core ? [own] : [own, ...calls]) for (const m of region.matchAll(pattern)) names.add(m[1]);
  }
  return names;
}

/** The property names `text` reads or sets (`.name`, `["name"]`): the accessors pruneUncalledMethods keeps. */
export function accessedNames(text) {
  const names = new Set();
  for (const m of text.matchAll(/\.\s*([A-Za-z_$][\w$]*)|\[\s*["'`]([\w$~]+)["'`]\s*\]/g)) names.add(m[1] ?? m[2]);
  return names;
}

/**
 * The SDK's, the bridge's and zod's internal members, named `_...` and read on `this`
 * (`this._transport`, `this._responseHandlers`, ...) in `text`: esbuild's mangleProps gives them
 * short names. Left out are the names that cross the bundle's edge or are spelled as strings
 * somewhere: `_meta` (MCP's wire field), `_zod` (zod defines it by name), `_errors` (zod's
 * formatted errors), `_def`, `__...`, and any other name `text` spells in quotes.
 */
export function privateMembers(text) {
  const quoted = new Set([...text.matchAll(/["'`](_[\w$]+)["'`]/g)].map((m) => m[1]));
  const members = new Set();
  for (const m of text.matchAll(/\bthis\.(_[A-Za-z][\w$]*)/g))
    if (!/^(_meta|_zod|_errors|_def)$/.test(m[1]) && !quoted.has(m[1])) members.add(m[1]);
  return members;
}
