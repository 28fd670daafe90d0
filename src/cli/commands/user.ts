/**
 * `mobile-builder-mcp user list | user set-plan NAME PLAN` (docs/cli.md#command-line): users and
 * their plans.
 */
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { withApp, type StoreOptions } from '../open-app.js';
import { printTable } from '../print-table.js';

/** Declares `user` and its subcommands on `program`; `set-plan` of an unknown plan exits 1. */
export function addUserCommand(program: Command): void {
  const user = program.command('user').description('Manage users and their plans.');
  user
    .command('list')
    .description('List users with their plans.')
    .action(async (options: StoreOptions) => {
      await withApp('user list', options, async (app) => {
        const rows = await app.users.list();
        if (rows.length === 0) return void process.stdout.write('No users.\n');
        printTable(
          ['USER', 'PLAN', 'CREATED'],
          rows.map((r) => [r.name, r.plan, r.createdAt]),
        );
      });
    });
  user
    .command('set-plan')
    .description('Put a user on a plan (free, pro, or one from --plans FILE); creates the user if new.')
    .argument('<name>', 'user name')
    .argument('<plan>', 'plan name')
    .action(async (name: string, plan: string, options: StoreOptions & { plans?: string }) => {
      await withApp(
        'user set-plan',
        { ...options, ...(options.plans && { plans: resolve(options.plans) }) },
        async (app) => {
          if (!app.plans[plan]) {
            process.stderr.write(`Unknown plan "${plan}". Plans: ${Object.keys(app.plans).join(', ')}.\n`);
            process.exitCode = 1;
            return;
          }
          await app.tokens.setPlan(name, plan);
          process.stdout.write(`User "${name}" is on plan "${plan}".\n`);
        },
      );
    });
}
