/**
 * `mobile-builder-mcp migrate [--database-url URL]` (docs/cli.md#command-line): applies the
 * migrations that `serve` and `worker` also apply at start.
 */
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { redactedDatabaseUrl } from '../../config/database-url.js';
import { migratePostgresDatabase } from '../../store/store.js';
import { withApp, type StoreOptions } from '../open-app.js';

/** Declares `migrate` on `program`: PostgreSQL under an advisory lock, else the SQLite file of `--data-dir`. */
export function addMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      'Apply the database migrations (serve and worker also do this at start): drizzle-pg/ to --database-url under an advisory lock, else drizzle/ to the SQLite file of --data-dir.',
    )
    .action(async (options: StoreOptions) => {
      if (options.databaseUrl) {
        const applied = await migratePostgresDatabase(options.databaseUrl);
        const where = redactedDatabaseUrl(options.databaseUrl);
        process.stdout.write(
          applied === 0
            ? `Database is up to date: ${where} (no migration to apply)\n`
            : `Applied ${applied} migration${applied === 1 ? '' : 's'}; database is up to date: ${where}\n`,
        );
        return;
      }
      const file = join(resolve(options.dataDir), 'mobile-builder.db');
      await withApp('migrate', { dataDir: options.dataDir }, async () => undefined);
      process.stdout.write(`Database is up to date: ${file}\n`);
    });
}
