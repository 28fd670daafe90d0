#!/usr/bin/env node
/**
 * The layer rule at folder level (docs/architecture.md, "Layers"): with every top-level folder of
 * src/ taken as one node (`src/store`, `src/workflows`...) and every root module as its own
 * (`src/app.ts`, `src/logger.ts`...), the import graph has no cycle. dependency-cruiser's
 * `no-circular` sees cycles between files only, and its `--collapse` only shapes reports, so this
 * cruises src/ with the project's options and looks for cycles in the collapsed graph itself.
 *
 *   node scripts/folder-cycles.mjs        (part of `npm run lint`, as `lint:folders`)
 *
 * Exits 1 and prints each cycle, with one file import for each of its arrows, when there is one.
 */
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/** A file's node: its top-level folder under src/, or the file itself for a root module. */
const NODE = /^src\/[^/]+/;

const { ruleSet, ...options } = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
const tsConfig = extractTSConfig(ruleSet.options?.tsConfig?.fileName ?? options.tsConfig?.fileName ?? 'tsconfig.json');
const { output } = await cruise(['src'], { ...options, validate: false, outputType: 'json' }, {}, { tsConfig });
const { modules } = typeof output === 'string' ? JSON.parse(output) : output;

/** node -> node -> the file imports between them, as "from -> to". */
const edges = new Map();
for (const module of modules) {
  const from = NODE.exec(module.source)?.[0];
  if (!from) continue;
  for (const dependency of module.dependencies) {
    const to = NODE.exec(dependency.resolved)?.[0];
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const imports = edges.get(from).get(to) ?? [];
    imports.push(`${module.source} -> ${dependency.resolved}`);
    edges.get(from).set(to, imports);
  }
}

/** Tarjan's strongly connected components: every component of more than one node is a cycle. */
function components(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const cycles = components(edges);
if (cycles.length === 0) {
  console.log(
    `✔ no folder-level import cycles (${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size} folders and root modules)`,
  );
} else {
  for (const cycle of cycles) {
    console.error(`✘ folder-level import cycle: ${cycle.join(', ')}`);
    for (const from of cycle) {
      for (const [to, imports] of edges.get(from) ?? []) {
        if (cycle.includes(to))
          console.error(
            `    ${from} -> ${to}: ${imports[0]}${imports.length > 1 ? ` and ${imports.length - 1} more` : ''}`,
          );
      }
    }
  }
  process.exitCode = 1;
}
