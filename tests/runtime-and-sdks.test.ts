/**
 * The runtime and the Expo SDKs, as the README promises them: the bin stops at once on a Node
 * older than `engines` with one line naming the Node it needs; the README's Node and SDK
 * statements equal `engines` and the default SDK list; and the default toolchain is never more
 * than one major behind the newest Expo SDK this release knows of (`NEWEST_KNOWN_EXPO_SDK`,
 * updated with each SDK; no registry call here).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EXPO_SDKS, NEWEST_KNOWN_EXPO_SDK, SUPPORTED_EXPO_SDKS } from '../src/builders/expo/index.js';
import { ROOT, tempDir } from './helpers.js';

const BIN = join(ROOT, 'bin', 'mobile-builder-mcp.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** `>=22.13` -> `22.13` */
const minimumNode = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];

describe('the Node runtime', () => {
  it('engines names a Node that is still supported (22.13 or newer)', () => {
    expect(minimumNode).toBeDefined();
    const [major, minor] = minimumNode!.split('.').map(Number) as [number, number];
    expect(major * 100 + minor).toBeGreaterThanOrEqual(2213);
    // The tests themselves run on a Node that engines accepts (.ci/run installs Node 24 when needed).
    const [ownMajor, ownMinor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(ownMajor * 100 + ownMinor).toBeGreaterThanOrEqual(major * 100 + minor);
  });

  it('the bin stops at once on an older Node, with one line naming the Node it needs', () => {
    // The running Node made to report 20.20.2 before the bin's first line runs.
    const fake = join(tempDir(), 'node-20.cjs');
    writeFileSync(fake, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });\n");
    const run = spawnSync(process.execPath, ['--require', fake, BIN, 'serve', '--http', '--port', '0'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      `mobile-builder-mcp needs Node.js ${minimumNode} or newer (Node 24 LTS recommended); this is Node 20.20.2. Install Node 24 from nodejs.org or your package manager, then run it again.`,
    ]);
  });

  it('the bin starts on this Node', () => {
    const run = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
  });
});

describe('the README says what the package does', () => {
  it('names the Node of engines', () => {
    expect(readme).toContain(`Node ${minimumNode} or newer`);
    expect(readme).not.toMatch(/Node 20 or newer|Node\.js 20\b/);
  });

  it('names the default Expo SDKs, and no SDK the package does not ship', () => {
    expect(readme).toContain(`serves Expo SDK ${DEFAULT_EXPO_SDKS.join(' and ')} by default`);
    const named = new Set([...readme.matchAll(/\bSDK (\d{2})\b/g)].map((m) => Number(m[1])));
    const known = new Set<number>([...SUPPORTED_EXPO_SDKS, NEWEST_KNOWN_EXPO_SDK]);
    expect([...named].filter((sdk) => !known.has(sdk))).toEqual([]);
  });
});

describe('the Expo SDK keeps up', () => {
  it('the default toolchain is at most one major behind the newest Expo SDK this release knows of', () => {
    const first = DEFAULT_EXPO_SDKS[0]!;
    const lock = JSON.parse(
      readFileSync(join(ROOT, 'toolchains', `expo-sdk-${first}`, 'package-lock.json'), 'utf8'),
    ) as { packages: Record<string, { version?: string }> };
    const expoMajor = Number(lock.packages['node_modules/expo']!.version!.split('.')[0]);
    expect(expoMajor).toBe(first);
    expect(NEWEST_KNOWN_EXPO_SDK - expoMajor).toBeLessThanOrEqual(1);
  });

  it('every served SDK ships a lockfile whose expo is that SDK, and the App Store Expo Go SDK (54) is served by default', () => {
    for (const sdk of SUPPORTED_EXPO_SDKS) {
      const lock = JSON.parse(
        readFileSync(join(ROOT, 'toolchains', `expo-sdk-${sdk}`, 'package-lock.json'), 'utf8'),
      ) as { packages: Record<string, { version?: string }> };
      expect(lock.packages['node_modules/expo']!.version!.startsWith(`${sdk}.`), `expo-sdk-${sdk}`).toBe(true);
    }
    expect(DEFAULT_EXPO_SDKS).toContain(54);
  });
});
