#!/usr/bin/env node
// The command-line entry point. `npm run build` bundles dist/cli/main.js (built from
// src/cli/main.ts) and its dependencies into dist/mobile-builder-mcp.cjs: MCP hosts launch a stdio
// server at every start, and resolving a few hundred ES modules was most of its start-up time
// (README "Start-up time"). The bundle's compiled code is kept in V8's code cache (in the user's
// cache folder, keyed by the bundle's size and time and the Node version), which saves compiling it
// again at each start.
// Without the bundle (a `tsc`-only build) the modules are loaded as they are.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const bundle = fileURLToPath(new URL('../dist/mobile-builder-mcp.cjs', import.meta.url));

/** Loads the CommonJS bundle through a V8 code cache; any cache problem only costs the compile. */
function loadBundle() {
  const source = readFileSync(bundle, 'utf8');
  const { size, mtimeMs } = statSync(bundle);
  let cacheFile;
  let cachedData;
  try {
    // The user's own cache folder: a cache that someone else could write would be code they could run.
    const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mobile-builder-mcp');
    cacheFile = join(dir, `bundle-${size}-${Math.floor(mtimeMs)}-${process.version}.v8cache`);
    if (existsSync(cacheFile)) cachedData = readFileSync(cacheFile);
    else mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    cacheFile = undefined;
  }
  const script = new Script(Module.wrap(source), { filename: bundle, ...(cachedData && { cachedData }) });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // After start-up, so that the functions start-up ran are in the cache too.
    setTimeout(() => {
      try {
        const tmp = `${cacheFile}.${process.pid}`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
        // Caches of earlier builds are never read again.
        for (const name of readdirSync(dirname(cacheFile))) if (name.startsWith('bundle-') && join(dirname(cacheFile), name) !== cacheFile && name.endsWith('.v8cache')) rmSync(join(dirname(cacheFile), name), { force: true });
      } catch {
        // A read-only or full temp folder: start without a cache next time.
      }
    }, 1000).unref();
  }
  return module.exports;
}

const { run } = existsSync(bundle) ? loadBundle() : await import('../dist/cli/main.js');
await run(process.argv);
