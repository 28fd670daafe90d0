/**
 * `mobile-builder-mcp toolchain install` through the real bin: an SDK this package does not ship
 * is refused with the supported list, and an installed toolchain is recognised (no second install).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../bin-helpers.js';
import { tempDir } from '../helpers.js';
import { ensureToolchain, TOOLCHAINS_CACHE } from './expo-helpers.js';

beforeAll(async () => {
  await ensureToolchain();
});

describe('toolchain install (CLI)', () => {
  it('refuses an SDK that is not shipped, and recognises an installed toolchain', () => {
    const refused = runCli(['toolchain', 'install', '--sdk', '55', '--data-dir', tempDir()]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('supported Expo SDKs: 58, 54');

    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'toolchains'), { recursive: true });
    for (const sdk of [58, 54])
      symlinkSync(join(TOOLCHAINS_CACHE, `expo-sdk-${sdk}`), join(dataDir, 'toolchains', `expo-sdk-${sdk}`));
    // Both default SDKs, in order, each recognised as installed.
    const installed = runCli(['toolchain', 'install', '--data-dir', dataDir]);
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(
      /The Expo SDK 58 toolchain is already installed.*\n.*The Expo SDK 54 toolchain is already installed/,
    );

    const help = runCli(['serve', '--help']).stdout;
    for (const flag of [
      '--expo-sdks',
      '--agent <mode>',
      '--agent-command',
      '--artifact-url',
      '--updates-signing-key',
      '--max-heavy-steps',
    ])
      expect(help).toContain(flag);
  });
});
