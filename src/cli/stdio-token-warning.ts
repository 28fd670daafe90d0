/**
 * What `serve` over stdio tells the operator at start about `SVC_API_TOKEN` (docs/cli.md#command-line).
 */
import { resolve } from 'node:path';
import type { App } from '../app.js';
import { redactedDatabaseUrl } from '../config/database-url.js';
import type { StoreOptions } from './open-app.js';

/**
 * Tells the operator at start (a warning in the log) when the stdio token cannot work in this
 * store (a token is only valid in the store that issued it). Names the data dir or the redacted
 * database URL, never the token.
 */
export async function warnAboutToken(app: App, token: string | undefined, options: StoreOptions): Promise<void> {
  const dataDir = resolve(options.dataDir);
  const pg = options.databaseUrl !== undefined;
  const where = pg ? `the database ${redactedDatabaseUrl(options.databaseUrl!)}` : `the data dir ${dataDir}`;
  const fix = `create one with: mobile-builder-mcp token create --user NAME ${pg ? '--database-url URL' : `--data-dir ${dataDir}`}`;
  const logged = pg ? { database: redactedDatabaseUrl(options.databaseUrl!) } : { dataDir };
  if (!token) {
    app.logger.warn(logged, `SVC_API_TOKEN is not set: tools are listed, but every tool call answers -32001; ${fix}`);
    return;
  }
  const state = await app.tokens.stateOf(token);
  if (state === 'active') return;
  const check = pg
    ? 'the database that issued them: check --database-url / SVC_DATABASE_URL'
    : 'the data dir that issued them: check --data-dir / SVC_DATA_DIR';
  const what = {
    malformed: 'is not an API token of this server (they start with svc_)',
    unknown: `is not known in ${where} (tokens are valid only in ${check})`,
    revoked: `was revoked in ${where}`,
    expired: `has expired in ${where}`,
  }[state];
  app.logger.warn(
    { ...logged, tokenState: state },
    `SVC_API_TOKEN ${what}: every tool call will answer -32001; ${fix}`,
  );
}
