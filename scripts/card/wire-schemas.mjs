// The SDK client's wire-schema tables in the session card (scripts/build-card.mjs): of the
// 2025-11-25 schemas, only those of the methods the card's code names stay (pruneSchemas2025);
// the 2026-07-28 codec, which the App bridge never speaks, keeps only what the Protocol asks of
// every codec (stubCodec2026). What is left out throws if reached.
import ts from 'typescript';

/**
 * The SDK client's 2025-11-25 wire schemas, built on first use by one function (`build$1`, returned
 * by `buildSchemas2025`) and looked up by method in `registryMaps`: every spec method's request,
 * notification and result schema. The card keeps the schemas of `methods` (namedMethods; all
 * if undefined), and every schema they are built from; a method outside them keeps its place
 * in the codec's tables of names, and a lookup of its schema throws (each table of schemas is a
 * Proxy, cardSchemaTable), so a message the bridge was never meant to exchange fails loudly,
 * never passes unchecked. `text` is parsed by TypeScript; the build fails if the shapes looked for are gone.
 */
export function pruneSchemas2025(text, path, methods) {
  if (!methods) return text;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const fail = (what) => {
    throw new Error(`build-card: ${what} is no longer in ${path}; review this trim against the new version`);
  };
  const { builder, registry, built } = schemaBuilder(source, fail);
  const trim = { source, text, methods, built, fail, edits: [], kept: new Set() };
  pruneRegistry(trim, registry);
  const variant = pruneCodec2025(trim);
  keepOtherReads(trim, registry, variant);
  pruneBuilder(trim, builder);
  let out = text;
  for (const [start, end, insert] of trim.edits.sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + insert + out.slice(end);
  return `${out}\nfunction cardSchemaTable(table) {\n\treturn new Proxy(table, { get: (t, method) => (method in t ? t[method] : cardUnbundledSchema(method)) });\n}\nfunction cardUnbundledSchema(method) {\n\tthrow new Error(\`The 2025-11-25 schema of \${method} is not bundled in the session card (scripts/build-card.mjs): its App bridge never sends or handles it\`);\n}\n`;
}

/**
 * The 2025-11-25 schema builder (`builder`, the function `buildSchemas2025` memoizes), the
 * `registryMaps` function and the builder's returned schemas by name (`built`) in `source`;
 * `fail` if one is gone.
 */
function schemaBuilder(source, fail) {
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
  return { builder, registry, built };
}

/**
 * registryMaps: `method: s.Schema` in its three tables. The schemas of `trim.methods` are kept
 * (`trim.kept`), the other entries removed, and each table wrapped in cardSchemaTable.
 */
function pruneRegistry({ source, text, methods, built, fail, edits, kept }, registry) {
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
}

/**
 * The 2025-11-25 codec's members that read a schema for one method (`rev2025Codec`): each kept
 * with its method, or made a function that throws. Returns the codec's `samplingResultVariant`.
 */
function pruneCodec2025({ source, methods, fail, edits }) {
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
  return variant;
}

/**
 * The other reads of a built schema: `s.Schema` in a function that holds
 * `const s = buildSchemas2025()`, the registry aside (and the sampling variant, if stubbed): kept.
 */
function keepOtherReads({ source, methods, built, kept }, registry, variant) {
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
}

/**
 * The builder's returned schemas not kept are removed, and so are its locals that no kept schema
 * is built from.
 */
function pruneBuilder({ text, built, edits, kept }, builder) {
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
}

/**
 * The SDK client's 2026-07-28 codec (`rev2026Codec`): the Protocol asks every codec whether a
 * method is the spec's (`hasRequestMethod`, `hasNotificationMethod`) and reads its `era` to name
 * an incoming message's era; it validates, encodes or decodes with it only on a connection that
 * negotiated 2026-07-28, which the App bridge never does (sdkClientTrims). Those three members
 * stay; every other one becomes a function that throws, so a path that reached it would fail
 * loudly. `text` is parsed by TypeScript; the build fails if the codec is gone.
 */
export function stubCodec2026(text, path) {
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
