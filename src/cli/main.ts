/**
 * The command line of docs/cli.md#command-line (a stable interface):
 *
 *   mobile-builder-mcp serve [--http] [--role all|api|worker] [--host H] [--port P] [--builder NAME] ...
 *   mobile-builder-mcp worker [--health-port P] [--builder NAME] ...
 *   mobile-builder-mcp token create --user NAME [--expires-in 30d]
 *   mobile-builder-mcp token list [--user NAME]
 *   mobile-builder-mcp token revoke ID
 *   mobile-builder-mcp login-code --user NAME [--expires-in 10m]
 *   mobile-builder-mcp user list | user set-plan NAME PLAN
 *   mobile-builder-mcp env set --project ID NAME=VALUE [--secret] | env list --project ID | env unset --project ID NAME
 *   mobile-builder-mcp migrate [--database-url URL]
 *   mobile-builder-mcp toolchain install [--sdk 58,54]
 *
 * Every store command takes `--database-url` (PostgreSQL) or works on the SQLite file of
 * `--data-dir`. Every option has an `SVC_*` environment equivalent. Logs go to stderr; stdout carries only the
 * stdio protocol (serve) or the command's output.
 */
import { Command } from 'commander';
import { VERSION } from '../app.js';
import { optionsFor } from '../config/settings.js';
import { UsageError } from '../config/usage-error.js';
import { addEnvCommand } from './commands/env.js';
import { addLoginCodeCommand } from './commands/login-code.js';
import { addMigrateCommand } from './commands/migrate.js';
import { addServeCommand } from './commands/serve.js';
import { addTokenCommand } from './commands/token.js';
import { addToolchainCommand } from './commands/toolchain.js';
import { addUserCommand } from './commands/user.js';
import { addWorkerCommand } from './commands/worker.js';
import type { EarlyStdioStart } from './early-stdio-start.js';

/**
 * Adds to every command the options the settings table (`config/settings.ts`) gives it, after the
 * command's own operands: `token create`'s are `--user`, `--expires-in`, then `--data-dir`.
 */
function addSettings(command: Command, path: readonly string[] = []): void {
  for (const sub of command.commands) {
    const name = [...path, sub.name()];
    if (sub.commands.length > 0) addSettings(sub, name);
    else for (const option of optionsFor(name.join(' '))) sub.addOption(option);
  }
}

/**
 * Builds the program (exported for tests of the parser; `run` executes it): one module per
 * command under `commands/`, declared in the order `--help` lists them, then the settings table's
 * options on each.
 * @param early what the early start read and answered of stdin (`early-stdio-start.ts`), for `serve` over stdio.
 */
export function buildProgram(early?: EarlyStdioStart): Command {
  const program = new Command('mobile-builder-mcp')
    .description('An MCP server that manages native mobile app projects and runs their build and deploy workflows.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)');
  addServeCommand(program, early);
  addWorkerCommand(program);
  addToolchainCommand(program);
  addTokenCommand(program);
  addLoginCodeCommand(program);
  addUserCommand(program);
  addEnvCommand(program);
  addMigrateCommand(program);
  addSettings(program);
  return program;
}

/**
 * Entry point of the bin. Exits non-zero with a message on stderr for bad usage or a failed command.
 * @param early what the early start read and answered of stdin (`early-stdio-start.ts`), when it ran.
 */
export async function run(argv: string[], early?: EarlyStdioStart): Promise<void> {
  const program = buildProgram(early);
  program.exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return;
    if (code?.startsWith('commander.')) {
      process.exitCode = (error as { exitCode?: number }).exitCode ?? 2;
      return;
    }
    process.stderr.write(`mobile-builder-mcp: ${(error as Error).message}\n`);
    process.exitCode = error instanceof UsageError ? error.exitCode : 1;
  }
}
