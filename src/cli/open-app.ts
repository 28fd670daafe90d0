/**
 * Opening the service for a command: the data dir checked first (a message with the fix), and the
 * short commands' `withApp` (token, login-code, user, migrate), which open the store without
 * starting the engine.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createApp, type App, type AppConfig } from '../app.js';
import { redactedDatabaseUrl } from '../config/database-url.js';
import { createLogger } from '../logger.js';

/** Where a short command finds the store: a data dir, or a PostgreSQL database (`--database-url`). */
export interface StoreOptions {
  dataDir: string;
  databaseUrl?: string;
  /** `--secrets-key-file` of the commands that take it (`env set|list|unset`). */
  secretsKeyFile?: string;
}

/**
 * Opens the service on `config.dataDir` (and the database named by `config.databaseUrl`, if any),
 * turning a data dir that cannot be created or written into a message with the path and the fix.
 * @throws Error naming the data dir and what to do; the store's error when it cannot be opened.
 */
export async function openApp(config: AppConfig): Promise<App> {
  const dir = config.dataDir;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
    const db = join(dir, 'mobile-builder.db');
    if (!config.databaseUrl && existsSync(db)) accessSync(db, constants.R_OK | constants.W_OK);
    return await createApp(config);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (/^(EACCES|EPERM|EROFS|ENOTDIR|EEXIST|ENOENT|SQLITE_CANTOPEN|SQLITE_READONLY|SQLITE_PERM)/.test(code)) {
      throw new Error(
        `cannot write the data dir ${dir} (${code}). Fix: make it a folder this user can write (for example: mkdir -p "${dir}" && chmod u+rwx "${dir}"), or choose another with --data-dir DIR (env SVC_DATA_DIR).`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Runs a short command against the store, without starting the engine; closes the store after.
 * Its PostgreSQL connections are named `mobile-builder-mcp/cli/<command>`.
 * @throws what `openApp` or `fn` throws.
 */
export async function withApp(
  command: string,
  options: StoreOptions & { plans?: string | undefined },
  fn: (app: App) => Promise<void>,
): Promise<void> {
  const app = await openApp({
    dataDir: resolve(options.dataDir),
    logger: createLogger('warn'),
    ...(options.databaseUrl && {
      databaseUrl: options.databaseUrl,
      applicationName: `mobile-builder-mcp/cli/${command}`,
      dbPoolSize: 2,
    }),
    ...(options.plans && { plansFile: options.plans }),
    ...(options.secretsKeyFile && { secretsKeyFile: resolve(options.secretsKeyFile) }),
  });
  try {
    await fn(app);
  } finally {
    await app.store.close();
  }
}

/** Where the store is, as start-up lines and messages show it: the database URL without its password, or the data dir. */
export function storeShown(options: StoreOptions): string {
  return options.databaseUrl
    ? `database ${redactedDatabaseUrl(options.databaseUrl)}`
    : `data dir ${resolve(options.dataDir)}`;
}
