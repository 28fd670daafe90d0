/**
 * `mobile-builder-mcp toolchain install [--sdk 58,54]` (docs/cli.md#command-line): the expo
 * builder's toolchains, installed ahead of their first build.
 */
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { toolchainsFor } from '../../builders/expo/index.js';

/** Declares `toolchain install` on `program`: progress on stderr, one line per SDK on stdout. */
export function addToolchainCommand(program: Command): void {
  program
    .command('toolchain')
    .description("Manage the expo builder's toolchain.")
    .command('install')
    .description(
      'Install the Expo SDK toolchains ahead of their first use (npm install from the lockfiles shipped in this package; about 1-2 min each).',
    )
    .action(async (options: { sdk: number[]; dataDir: string }) => {
      for (const installed of toolchainsFor({ dataDir: resolve(options.dataDir), sdks: options.sdk })) {
        if (installed.isInstalled()) {
          process.stdout.write(`The Expo SDK ${installed.sdk} toolchain is already installed: ${installed.dir}\n`);
          continue;
        }
        await installed.ensure({ onProgress: (text) => process.stderr.write(`${text}\n`) });
        process.stdout.write(`Installed the Expo SDK ${installed.sdk} toolchain: ${installed.dir}\n`);
      }
    });
}
