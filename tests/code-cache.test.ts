/**
 * The bin's V8 code cache with two installs on one machine (bin/mobile-builder-mcp.js): two copies
 * of the built package in temp folders, different builds, one cache folder. Neither start deletes
 * the other's cache, both are warm (a cache hit) on their second start, and a start that writes its
 * cache removes only its own install's other builds and files unused for 30 days. Asserted on the
 * cache files and the bin's debug lines (`MBM_DEBUG_CODE_CACHE=1`), never on times.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, tempDir } from './helpers.js';

const ROOT = dirname(dirname(BIN));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the built package in a temp folder; `variant` makes its bundle another build. */
function install(variant: string): string {
  const root = tempDir(`mbm-install-${variant}-`);
  dirs.push(root);
  for (const part of ['bin', 'drizzle', 'assets', 'toolchains', 'package.json'])
    cpSync(join(ROOT, part), join(root, part), { recursive: true });
  mkdirSync(join(root, 'dist'));
  for (const name of [
    'mobile-builder-mcp.cjs',
    'mobile-builder-oauth.cjs',
    'mobile-builder-modern.cjs',
    'mobile-builder-early.cjs',
  ])
    cpSync(join(ROOT, 'dist', name), join(root, 'dist', name));
  const bundle = join(root, 'dist', 'mobile-builder-mcp.cjs');
  const source = readFileSync(bundle, 'utf8');
  expect(source).toMatch(/^\/\/build:[0-9a-f]{16}\n/);
  writeFileSync(bundle, `//build:${variant.padEnd(16, '0')}${source.slice(source.indexOf('\n'))}\n// ${variant}\n`);
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return root;
}

/**
 * Starts the install's bin over stdio, answers initialize, and waits for the cache's debug line
 * (`hit` on a warm start, `written` after a first start's write); returns the cache file and what happened.
 */
async function start(
  root: string,
  cacheHome: string,
): Promise<{ outcome: 'hit' | 'written'; file: string; stderr: string }> {
  const dataDir = join(root, 'data');
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'mobile-builder-mcp.js'), 'serve', '--data-dir', dataDir, '--port', '0', '--log-level', 'warn'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: cacheHome, MBM_DEBUG_CODE_CACHE: '1' },
    },
  );
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`,
  );
  let stdout = '';
  let stderr = '';
  try {
    return await new Promise((resolve, reject) => {
      const check = () => {
        const done = /code cache (hit|written) (\S+)/.exec(stderr);
        if (done && stdout.includes('\n')) {
          expect(JSON.parse(stdout.slice(0, stdout.indexOf('\n')))).toMatchObject({
            id: 1,
            result: { serverInfo: { name: 'mobile-builder-mcp' } },
          });
          resolve({ outcome: done[1] as 'hit' | 'written', file: done[2]!, stderr });
        }
      };
      child.stdout.on('data', (d) => {
        stdout += d;
        check();
      });
      child.stderr.on('data', (d) => {
        stderr += d;
        check();
      });
      child.once('exit', (code) => reject(new Error(`the bin exited (${code}): ${stderr}`)));
    });
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }
}

describe('the V8 code cache with two installs side by side', () => {
  it('keys the cache by build and install: neither install deletes the other, both are warm on their second start', async () => {
    const a = install('a');
    const b = install('b');
    const cacheHome = tempDir('mbm-cache-home-');
    dirs.push(cacheHome);

    const firstA = await start(a, cacheHome);
    const firstB = await start(b, cacheHome);
    expect(firstA.outcome).toBe('written');
    expect(firstB.outcome).toBe('written');
    expect(firstA.file).not.toBe(firstB.file);
    expect(dirname(firstA.file)).toBe(join(cacheHome, 'mobile-builder-mcp'));
    expect(existsSync(firstA.file)).toBe(true);
    expect(existsSync(firstB.file)).toBe(true);

    const secondA = await start(a, cacheHome);
    const secondB = await start(b, cacheHome);
    expect(secondA).toMatchObject({ outcome: 'hit', file: firstA.file });
    expect(secondB).toMatchObject({ outcome: 'hit', file: firstB.file });
    expect(existsSync(firstA.file) && existsSync(firstB.file)).toBe(true);
  });

  it("a write removes its own install's other builds and caches unused for 30 days, and keeps other installs' recent ones", async () => {
    const a = install('c');
    const cacheHome = tempDir('mbm-cache-home-');
    dirs.push(cacheHome);
    const own = (await start(a, cacheHome)).file;
    const folder = dirname(own);
    // bundle-<build>-<install>-<node>.v8cache
    const [, , installHash, node] = basename(own, '.v8cache').split('-');
    const ownOtherBuild = join(folder, `bundle-feedfacefeedface-${installHash}-${node}.v8cache`);
    const othersRecent = join(folder, `bundle-feedfacefeedface-0123456789abcdef-${node}.v8cache`);
    const othersUnused = join(folder, 'bundle-0badc0de0badc0de-fedcba9876543210-v18.0.0.v8cache');
    const olderBinsName = join(folder, `bundle-1975219-1795486593637-${node}.v8cache`);
    for (const file of [ownOtherBuild, othersRecent, othersUnused, olderBinsName]) writeFileSync(file, 'cache');
    const longAgo = new Date(Date.now() - 60 * 24 * 60 * 60 * 1000);
    utimesSync(othersUnused, longAgo, longAgo);
    rmSync(own);

    const again = await start(a, cacheHome);
    expect(again).toMatchObject({ outcome: 'written', file: own });
    expect(again.stderr).toContain(`code cache removed ${ownOtherBuild}`);
    expect(again.stderr).toContain(`code cache removed ${othersUnused}`);
    expect([own, ownOtherBuild, othersRecent, othersUnused, olderBinsName].map(existsSync)).toEqual([
      true,
      false,
      true,
      false,
      true,
    ]);
  });
});
