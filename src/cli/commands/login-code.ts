/**
 * `mobile-builder-mcp login-code --user NAME [--expires-in 10m]` (docs/cli.md#command-line, README
 * "Sign in with OAuth"): a one-time code for the consent page or the console's sign-in page.
 */
import type { Command } from 'commander';
import { parseDurationOption } from '../duration-option.js';
import { withApp, type StoreOptions } from '../open-app.js';

/** Declares `login-code` on `program`; the code is printed alone on the last line of stdout. */
export function addLoginCodeCommand(program: Command): void {
  program
    .command('login-code')
    .description(
      'Print a one-time login code for an existing user: typed on the consent page when a remote MCP host signs in with OAuth, or on the sign-in page of the web console. Single use; the code is alone on the last line.',
    )
    .requiredOption('--user <name>', 'user who signs in with the code')
    .option('--expires-in <duration>', 'lifetime such as 10m or 1h (default 10m, at most 1d)')
    .action(async (options: StoreOptions & { user: string; expiresIn?: string }) => {
      const ttlMs = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      await withApp('login-code', options, async (app) => {
        const code = await app.loginCodes.create(
          options.user,
          ttlMs === undefined ? undefined : Math.ceil(ttlMs / 1000),
        );
        const minutes = Math.round((ttlMs ?? 600_000) / 60_000);
        process.stdout.write(
          `One-time login code for user "${options.user}" (valid ${minutes >= 1 ? `${minutes} min` : 'under a minute'}, single use):\n${code}\n`,
        );
      });
    });
}
