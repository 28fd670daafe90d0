/**
 * The process tests' global set-up (tests/setup/fresh-dist.ts): a dist/ older than src/ is rebuilt
 * before any test spawns the bin, and a failing build stops the run with its error. Checked on a
 * small repository in a temp folder whose `npm run build` is a script of the test's own.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { distStaleness, ensureFreshDist } from './setup/fresh-dist.js';
import { tempDir } from './helpers.js';

const OUTPUTS = [
  'dist/index.js',
  'dist/mobile-builder-mcp.cjs',
  'dist/mobile-builder-oauth.cjs',
  'dist/mobile-builder-early.cjs',
];
const roots: string[] = [];

/** A repository with src/, the build's other inputs and (unless `built` is false) its outputs, all dated `at` (seconds). */
function repo(build: string, built = true, at = 1_000_000): string {
  const root = tempDir('mbm-fresh-dist-');
  roots.push(root);
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { build } }),
    'src/cli/main.ts': 'export {};\n',
    'scripts/bundle.mjs': '\n',
    'tsconfig.json': '{}\n',
    ...(built ? Object.fromEntries(OUTPUTS.map((o) => [o, 'built\n'])) : {}),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    utimesSync(join(root, path), at, at);
  }
  return root;
}

/** A build script that writes every output with the current time. */
const WRITE_OUTPUTS = `node -e "const fs=require('fs');fs.mkdirSync('dist',{recursive:true});for(const f of ${JSON.stringify(OUTPUTS).replaceAll('"', "'")})fs.writeFileSync(f,'rebuilt')"`;

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('dist/ freshness', () => {
  it('is current when no build input is newer than the oldest output', () => {
    expect(distStaleness(repo(WRITE_OUTPUTS))).toBeNull();
  });

  it('names the missing output and the edited source', () => {
    expect(distStaleness(repo(WRITE_OUTPUTS, false))).toEqual({ path: 'dist/index.js', reason: 'missing_output' });
    const root = repo(WRITE_OUTPUTS);
    utimesSync(join(root, 'src/cli/main.ts'), 1_000_100, 1_000_100);
    expect(distStaleness(root)).toEqual({ path: join('src', 'cli', 'main.ts'), reason: 'newer_input' });
  });

  it('rebuilds a stale dist/ before the tests run', () => {
    const root = repo(WRITE_OUTPUTS);
    utimesSync(join(root, 'src/cli/main.ts'), 1_000_100, 1_000_100);
    ensureFreshDist(root);
    expect(distStaleness(root)).toBeNull();
  });

  it('stops the run with the build error when the build fails', () => {
    const root = repo(`node -e "console.error('tsc: error TS2322 in main.ts'); process.exit(2)"`, false);
    expect(() => ensureFreshDist(root)).toThrow(
      /dist\/ is stale \(\S*dist\/index\.js is missing\) and `npm run build` failed[\s\S]*error TS2322/,
    );
  });

  it('leaves a current dist/ alone (no build)', () => {
    const root = repo(`node -e "process.exit(3)"`);
    expect(() => ensureFreshDist(root)).not.toThrow();
  });
});
