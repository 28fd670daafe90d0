/**
 * `mobile-builder-mcp token create | list | revoke` (docs/cli.md#command-line): the API tokens, and
 * in the listing and revocation the OAuth grants and web console sessions too.
 */
import type { Command } from 'commander';
import type { App } from '../../app.js';
import { parseDurationOption } from '../duration-option.js';
import { withApp, type StoreOptions } from '../open-app.js';
import { printTable } from '../print-table.js';

/** Declares `token` and its subcommands on `program`; the store options come from the settings table. */
export function addTokenCommand(program: Command): void {
  const token = program.command('token').description('Manage API tokens.');
  addCreate(token);
  addList(token);
  addRevoke(token);
}

/** `token create --user NAME [--expires-in D] [--read-only]`: prints the secret alone on the last line. */
function addCreate(token: Command): void {
  token
    .command('create')
    .description(
      'Create an API token (and the user, if new). Prints the token alone on the last line; it is not shown again.',
    )
    .requiredOption('--user <name>', 'user the token acts for')
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h or 90m (default: no expiry)')
    .option(
      '--read-only',
      'a token that lists and calls only the tools that read (annotated readOnlyHint); the others answer -32003',
    )
    .action(async (options: StoreOptions & { user: string; expiresIn?: string; readOnly?: boolean }) => {
      const expires = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      if (!/^[\w.@+-]{1,64}$/.test(options.user))
        throw new Error('--user must be 1 to 64 letters, digits or . _ @ + -');
      await withApp('token create', options, async (app) => {
        const { token: secret, summary } = await app.tokens.create(options.user, expires, options.readOnly === true);
        const expiry = summary.expiresAt ? `expires ${summary.expiresAt}` : 'does not expire';
        const kind = summary.readOnly ? 'read-only token' : 'token';
        process.stdout.write(
          `Created ${kind} ${summary.id} for user "${summary.user}" (${expiry}).\nStore it now: it is not shown again.\n${secret}\n`,
        );
      });
    });
}

/** `token list [--user NAME] [--json]`: tokens, then OAuth grants, then console sessions (never a whole secret). */
function addList(token: Command): void {
  token
    .command('list')
    .description('List API tokens, OAuth grants and web console sessions (never prints a whole token).')
    .option('--user <name>', "only this user's tokens, grants and sessions")
    .option(
      '--json',
      'print JSON: one array, API tokens first ("kind": "api_token"), then OAuth grants ("kind": "oauth_grant"), then console sessions ("kind": "web_session")',
    )
    .action(async (options: StoreOptions & { user?: string; json?: boolean }) => {
      await withApp('token list', options, (app) => listAccess(app, options));
    });
}

/** Prints the listing of `token list` for `options.user` (every user when absent), as tables or as one JSON array. */
async function listAccess(app: App, options: { user?: string; json?: boolean }): Promise<void> {
  const rows = await app.tokens.list(options.user);
  const grants = await grantsOf(app, options.user);
  const sessions = await sessionsOf(app, options.user);
  if (options.json) {
    const all = [
      ...rows.map((r) => ({ kind: 'api_token', ...r })),
      ...grants.map((g) => ({ kind: 'oauth_grant', ...g })),
      ...sessions.map((w) => ({ kind: 'web_session', ...w })),
    ];
    return void process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  }
  if (rows.length === 0) process.stdout.write('No tokens.\n');
  else {
    printTable(
      ['ID', 'USER', 'TOKEN', 'STATE', 'ACCESS', 'CREATED', 'EXPIRES'],
      rows.map((r) => [
        r.id,
        r.user,
        r.prefix,
        r.state,
        r.readOnly ? 'read-only' : 'read-write',
        r.createdAt,
        r.expiresAt ?? 'never',
      ]),
    );
  }
  if (grants.length > 0) {
    process.stdout.write(
      '\nOAuth grants (hosts signed in with OAuth; token revoke ID revokes one with all its tokens):\n',
    );
    printTable(
      ['ID', 'USER', 'CLIENT', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES'],
      grants.map((g) => [
        g.id,
        g.user,
        g.client.slice(0, 40),
        g.state,
        g.createdAt,
        g.lastUsedAt ?? 'never',
        g.expiresAt ?? '-',
      ]),
    );
  }
  if (sessions.length > 0) {
    process.stdout.write('\nWeb console sessions (token revoke ID signs one out):\n');
    printTable(
      ['ID', 'USER', 'SIGNED IN WITH', 'CREATED', 'EXPIRES'],
      sessions.map((w) => [w.id, w.user, w.signedInWith, w.createdAt, w.expiresAt]),
    );
  }
}

/** `token revoke ID`: a token, else an OAuth grant, else a console session; exit code 1 when none has that id. */
function addRevoke(token: Command): void {
  token
    .command('revoke')
    .description(
      "Revoke an API token, an OAuth grant with all its access and refresh tokens, or a web console session, by its id (from token list). Servers on the same SQLite data dir refuse it from their next request after this command returns; PostgreSQL nodes once the revocation's notice reaches them (at its commit, normally within milliseconds; a node whose notice connection is down answers /healthz 503 and clears its caches when it is back).",
    )
    .argument('<id>', 'token, grant or console session id')
    .action(async (id: string, options: StoreOptions) => {
      await withApp('token revoke', options, async (app) => {
        if (await app.tokens.revoke(id)) return void process.stdout.write(`Revoked token ${id}.\n`);
        if (await app.oauthGrants.revokeGrant(id))
          return void process.stdout.write(`Revoked OAuth grant ${id} and all its tokens.\n`);
        if (await app.webSessions.end(id)) return void process.stdout.write(`Ended web console session ${id}.\n`);
        process.stderr.write(`No token, OAuth grant or console session with id ${id}.\n`);
        process.exitCode = 1;
      });
    });
}

/** OAuth grants of every user or of `userName` (none for an unknown user). */
async function grantsOf(app: App, userName?: string) {
  if (userName === undefined) return app.oauthGrants.list();
  const user = await app.users.findByName(userName);
  return user ? app.oauthGrants.list(user.id) : [];
}

/** Web console sessions of every user or of `userName` (none for an unknown user). */
async function sessionsOf(app: App, userName?: string) {
  if (userName === undefined) return app.webSessions.list();
  const user = await app.users.findByName(userName);
  return user ? app.webSessions.list(user.id) : [];
}
