#!/usr/bin/env node
// The command-line entry point. `npm run build` bundles dist/cli/main.js (built from
// src/cli/main.ts) and its dependencies into dist/mobile-builder-mcp.cjs: MCP hosts launch a stdio
// server at every start, and resolving a few hundred ES modules was most of its start-up time
// (docs/performance.md "Start-up time"). The bundle's compiled code is kept in V8's code cache, which saves
// compiling it again at each start.
//
// A plain `serve` over stdio (src/cli/early-stdio-start.ts says which command lines are plain)
// starts with a small bundle of its own, dist/mobile-builder-early.cjs, which answers a first
// `initialize` before the main bundle is read: the main bundle is loaded right after that answer
// and serves everything else, the lines that came meanwhile included, in order. The early bundle is
// a few KiB that V8 compiles lazily, so it has no code cache of its own.
//
// The cache lives in the user's cache folder, one file per build and install: its name carries the
// build's hash (the bundle's first line, written by scripts/bundle.mjs), a hash of the install's
// path and the Node version. Several installs on one machine (npx and a global install, two
// versions, CI checkouts) each keep their own cache: a start never deletes another install's file.
// When it writes its own, it removes only its own install's files of other builds or Node versions,
// and any cache file nobody has used for 30 days (a warm start marks its file used once a day).
// `MBM_DEBUG_CODE_CACHE=1` prints what the cache did to stderr (a hit, a miss, a write, a removal).
// `MBM_DEBUG_MODULES=1` prints, when the first line is written to stdout (the answer to
// `initialize` over stdio), which bundles were loaded so far and which of their lazily evaluated
// modules (those esbuild wraps, which is most of them) were evaluated, as one JSON line on stderr;
// it compiles the bundles without the cache. A bundle's other modules are evaluated at its load,
// always (dist/bundle-stats.json lists the early bundle's). At exit it prints one more line,
// `{"atExit":true,...}`: every module evaluated in the process's life, and every bundle required
// (the OAuth and 2026-07-28 bundles are required by the main one on first use).
//
// Without the bundle (a `tsc`-only build) the modules are loaded as they are.
//
// This file is CommonJS (bin/package.json): an ES module entry costs Node a few milliseconds more
// at every start.
'use strict';
// Node 22.13 or newer (package.json "engines"; Expo SDK 58's tools need it): an older Node stops
// here with one line, before any module that might not load on it.
{
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 22 || (major === 22 && minor < 13)) {
    process.stderr.write(
      `mobile-builder-mcp needs Node.js 22.13 or newer (Node 24 LTS recommended); this is Node ${process.versions.node}. Install Node 24 from nodejs.org or your package manager, then run it again.\n`,
    );
    process.exit(1);
  }
}
const {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} = require('node:fs');
const { createRequire, Module } = require('node:module');
const { homedir } = require('node:os');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const bundle = join(__dirname, '..', 'dist', 'mobile-builder-mcp.cjs');
const earlyBundle = join(__dirname, '..', 'dist', 'mobile-builder-early.cjs');
const DAY_MS = 24 * 60 * 60 * 1000;
/** Cache files of any install unused this long are removed by whichever start writes one. */
const UNUSED_MS = 30 * DAY_MS;
const debug =
  process.env.MBM_DEBUG_CODE_CACHE === '1'
    ? (line) => process.stderr.write(`mobile-builder-mcp: code cache ${line}\n`)
    : () => {};

/** A short hex hash of `text` (two 32-bit FNV-1a passes): names an install's path, nothing secret. */
function pathHash(text) {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x811c9dc5) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/** Removes this install's caches of other builds and every cache unused for 30 days; never another install's recent file. */
function prune(dir, own, install) {
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('bundle-') || !name.endsWith('.v8cache') || name === own) continue;
    const file = join(dir, name);
    try {
      if (name.includes(`-${install}-`) || now - statSync(file).mtimeMs > UNUSED_MS) {
        rmSync(file, { force: true });
        debug(`removed ${file}`);
      }
    } catch {
      // Removed by another start meanwhile.
    }
  }
}

/** `MBM_DEBUG_MODULES=1`: what the loaded bundles evaluated, printed at the first write to stdout. */
const trace = process.env.MBM_DEBUG_MODULES === '1' ? { bundlesLoaded: [], evaluated: [], bundled: 0 } : undefined;
if (trace) {
  globalThis.__mbmEvaluated = trace.evaluated;
  const write = process.stdout.write;
  process.stdout.write = function (...args) {
    process.stdout.write = write;
    const result = write.apply(this, args);
    const { bundlesLoaded, evaluated, bundled } = trace;
    process.stderr.write(
      `${JSON.stringify({ lazyModulesEvaluated: evaluated.length, lazyModulesBundled: bundled, bundlesLoaded, evaluated })}\n`,
    );
    return result;
  };
  process.on('exit', () => {
    const bundlesRequired = Object.keys(require.cache)
      .filter((file) => file.endsWith('.cjs'))
      .map((file) => `dist/${file.slice(dirname(file).length + 1)}`);
    process.stderr.write(
      `${JSON.stringify({ atExit: true, bundlesLoaded: trace.bundlesLoaded, bundlesRequired, evaluated: trace.evaluated })}\n`,
    );
  });
}

/** Runs the compiled `script` of the CommonJS bundle `file` and returns its exports. */
function runBundle(file, script) {
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/**
 * `MBM_DEBUG_MODULES=1`: loads `file` with esbuild's lazy module wrappers (`__esm`, `__commonJS`)
 * recording the path of each module they evaluate, without the code cache.
 */
function loadTraced(file) {
  const source = readFileSync(file, 'utf8');
  const traced = source
    .replace(
      'var __esm=(fn,res)=>function(){',
      'var __esm=(fn,res)=>function(){fn&&globalThis.__mbmEvaluated.push(__getOwnPropNames(fn)[0]);',
    )
    .replace(
      'var __commonJS=(cb,mod)=>function(){',
      'var __commonJS=(cb,mod)=>function(){mod||globalThis.__mbmEvaluated.push(__getOwnPropNames(cb)[0]);',
    );
  trace.bundled += [...source.matchAll(/__(?:esm|commonJS)\(\{"([^"]+)"/g)].length;
  trace.bundlesLoaded.push(`dist/${file.slice(dirname(file).length + 1)}`);
  return runBundle(file, new Script(Module.wrap(traced), { filename: file }));
}

/** Loads the CommonJS bundle through a V8 code cache; any cache problem only costs the compile. */
function loadBundle() {
  if (trace) return loadTraced(bundle);
  const source = readFileSync(bundle, 'utf8');
  // The first line is `//build:<hash>` (scripts/bundle.mjs); an older bundle without it is keyed by its size.
  const build = source.startsWith('//build:') ? source.slice(8, source.indexOf('\n')) : `size${source.length}`;
  const install = pathHash(bundle);
  const name = `bundle-${build}-${install}-${process.version}.v8cache`;
  // The user's own cache folder: a cache that someone else could write would be code they could run.
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mobile-builder-mcp');
  const cacheFile = join(dir, name);
  let cachedData;
  let cacheMtimeMs = 0;
  try {
    cachedData = readFileSync(cacheFile);
    cacheMtimeMs = statSync(cacheFile).mtimeMs;
  } catch {
    cachedData = undefined;
  }
  const script = new Script(Module.wrap(source), { filename: bundle, ...(cachedData && { cachedData }) });
  if (cachedData) debug(script.cachedDataRejected ? `rejected ${cacheFile}` : `hit ${cacheFile}`);
  else debug(`miss ${cacheFile}`);
  const exports = runBundle(bundle, script);
  if (!cachedData || script.cachedDataRejected) {
    // After start-up, so that the functions start-up ran are in the cache too.
    setTimeout(() => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const tmp = `${cacheFile}.${process.pid}`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
        prune(dir, name, install);
        debug(`written ${cacheFile}`);
      } catch {
        // A read-only or full cache folder: start without a cache next time.
      }
    }, 1000).unref();
  } else if (Date.now() - cacheMtimeMs > DAY_MS) {
    // Marks the cache used, so that other installs' starts do not take it for abandoned.
    setTimeout(() => {
      try {
        const now = new Date();
        utimesSync(cacheFile, now, now);
      } catch {
        // Removed meanwhile: the next start writes it again.
      }
    }, 1000).unref();
  }
  return exports;
}

/** The early start of a plain stdio `serve` (a promise of its hand-over), or undefined for any other command line. */
function startEarly() {
  if (!existsSync(earlyBundle)) return undefined;
  const { startStdioEarly } = trace ? loadTraced(earlyBundle) : require(earlyBundle);
  return startStdioEarly(process.argv, process.env);
}

/** Runs the command line: through the early start when it is a plain stdio `serve`. */
function start() {
  if (!existsSync(bundle)) return import('../dist/cli/main.js').then(({ run }) => run(process.argv));
  const early = startEarly();
  if (!early) return loadBundle().run(process.argv);
  return early.then((handOver) => loadBundle().run(process.argv, handOver));
}

Promise.resolve()
  .then(start)
  .catch((error) => {
    // As an uncaught error would: the message and stack on stderr, exit code 1.
    process.exitCode = 1;
    console.error(error);
  });
