/**
 * `mobile-builder-mcp env set | list | unset` (docs/cli.md#command-line): a project's environment
 * variables and secrets (docs/security.md "Project environment"). The operator's way in, beside
 * the owner's web console; never the chat. A secret's value is never printed.
 */
import type { Command } from 'commander';
import { text } from 'node:stream/consumers';
import { withApp, type StoreOptions } from '../open-app.js';
import { printTable } from '../print-table.js';

/** The project option every subcommand takes. */
interface ProjectOption extends StoreOptions {
  project: string;
}

/** Declares `env` and its subcommands on `program`; the store options come from the settings table. */
export function addEnvCommand(program: Command): void {
  const env = program
    .command('env')
    .description("Manage a project's environment variables and secrets (for its builds; never shown in the chat).");
  addSet(env);
  addList(env);
  addUnset(env);
}

/** `env set --project ID NAME=VALUE [--secret]`; `NAME` alone reads the value from stdin. */
function addSet(env: Command): void {
  env
    .command('set')
    .description(
      'Set a variable of a project. NAME=VALUE, or NAME alone to read the value from stdin (keeps a secret out of the shell history and the process list).',
    )
    .argument('<assignment>', 'NAME=VALUE, or NAME')
    .requiredOption('--project <id>', 'the project')
    .option('--secret', "a secret: stored sealed, given only to the build's own processes, never shown again")
    .action(async (assignment: string, options: ProjectOption & { secret?: boolean }) => {
      const at = assignment.indexOf('=');
      const name = at === -1 ? assignment : assignment.slice(0, at);
      const value = at === -1 ? (await text(process.stdin)).replace(/\r?\n$/, '') : assignment.slice(at + 1);
      await withApp('env set', options, async (app) => {
        const replaced = await app.env.set(options.project, name, value, options.secret === true);
        const what = options.secret ? 'Secret' : 'Variable';
        process.stdout.write(`${what} ${name} ${replaced ? 'replaced' : 'set'} for project ${options.project}.\n`);
      });
    });
}

/** `env list --project ID [--json]`: names, kinds and plain values; a secret's value never. */
function addList(env: Command): void {
  env
    .command('list')
    .description("List a project's variables (a secret's value is never printed).")
    .requiredOption('--project <id>', 'the project')
    .option('--json', 'print JSON: an array of {name, secret, value (null for a secret), updatedAt}')
    .action(async (options: ProjectOption & { json?: boolean }) => {
      await withApp('env list', options, async (app) => {
        const rows = await app.env.list(options.project);
        if (options.json) return void process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        if (rows.length === 0) return void process.stdout.write('No variables.\n');
        printTable(
          ['NAME', 'KIND', 'VALUE', 'UPDATED'],
          rows.map((r) => [r.name, r.secret ? 'secret' : 'plain', r.value ?? '(hidden)', r.updatedAt]),
        );
      });
    });
}

/** `env unset --project ID NAME`: exit code 1 when the project has no such variable. */
function addUnset(env: Command): void {
  env
    .command('unset')
    .description('Remove a variable of a project.')
    .argument('<name>', 'the variable')
    .requiredOption('--project <id>', 'the project')
    .action(async (name: string, options: ProjectOption) => {
      await withApp('env unset', options, async (app) => {
        if (await app.env.unset(options.project, name))
          return void process.stdout.write(`Removed ${name} from project ${options.project}.\n`);
        process.stderr.write(`Project ${options.project} has no variable ${name}.\n`);
        process.exitCode = 1;
      });
    });
}
