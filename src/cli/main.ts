/**
 * The command line of README.md#command-line (a stable interface):
 *
 *   mobile-builder-mcp serve [--http] [--host H] [--port P] [--builder NAME] ...
 *   mobile-builder-mcp token create --user NAME [--expires-in 30d]
 *   mobile-builder-mcp token list [--user NAME]
 *   mobile-builder-mcp token revoke ID
 *   mobile-builder-mcp login-code --user NAME [--expires-in 10m]
 *   mobile-builder-mcp user list | user set-plan NAME PLAN
 *   mobile-builder-mcp migrate
 *   mobile-builder-mcp toolchain install [--sdk 56]
 *
 * Every option has an `SVC_*` environment equivalent. Logs go to stderr; stdout carries only the
 * stdio protocol (serve) or the command's output.
 */
import { Command } from 'commander';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { createApp, listenHttp, VERSION, type App, type AppConfig } from '../app.js';
import { parseDuration } from '../auth/api-token.js';
import { toolchainFor } from '../builders/expo/index.js';
import { appConfigOf, type ServeOptions } from '../config/serve-options.js';
import { optionsFor, SETTINGS } from '../config/settings.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';
import { detectBuildSandbox, SANDBOX_TURNED_OFF, type BuildSandbox } from '../builders/process-sandbox.js';
import { builderRunsProcesses, checkBuilderSettings } from '../builders/builder-registry.js';
import { createLogger } from '../logger.js';
import { serveStdio } from '../transports/stdio-server.js';
import type { RunningHttpServer } from '../transports/http-server.js';

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

/** Builds the program (exported for tests of the parser; `run` executes it). */
export function buildProgram(): Command {
  const program = new Command('mobile-builder-mcp')
    .description('An MCP server that manages native mobile app projects and runs their build and deploy workflows.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('serve')
    .description('Serve MCP over stdio (default; what MCP hosts launch) or streamable HTTP (--http).')
    .action(async (options: ServeOptions) => serve(options));

  program
    .command('toolchain')
    .description('Manage the expo builder\'s toolchain.')
    .command('install')
    .description('Install the Expo SDK toolchain ahead of its first use (npm ci from the lockfile shipped in this package; about 1-2 min).')
    .action(async (options: { sdk: number; dataDir: string }) => {
      const installed = toolchainFor({ dataDir: resolve(options.dataDir), sdk: options.sdk });
      if (installed.isInstalled()) {
        process.stdout.write(`The Expo SDK ${options.sdk} toolchain is already installed: ${installed.dir}\n`);
        return;
      }
      await installed.ensure({ onProgress: (text) => process.stderr.write(`${text}\n`) });
      process.stdout.write(`Installed the Expo SDK ${options.sdk} toolchain: ${installed.dir}\n`);
    });

  const token = program.command('token').description('Manage API tokens.');
  token
    .command('create')
    .description('Create an API token (and the user, if new). Prints the token alone on the last line; it is not shown again.')
    .requiredOption('--user <name>', 'user the token acts for')
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h or 90m (default: no expiry)')
    .action(async (options: { user: string; expiresIn?: string; dataDir: string }) => {
      const expires = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      if (!/^[\w.@+-]{1,64}$/.test(options.user)) throw new Error('--user must be 1 to 64 letters, digits or . _ @ + -');
      await withApp(options.dataDir, async (app) => {
        const { token: secret, summary } = await app.tokens.create(options.user, expires);
        const expiry = summary.expiresAt ? `expires ${summary.expiresAt}` : 'does not expire';
        process.stdout.write(`Created token ${summary.id} for user "${summary.user}" (${expiry}).\nStore it now: it is not shown again.\n${secret}\n`);
      });
    });
  token
    .command('list')
    .description('List API tokens, OAuth grants and web console sessions (never prints a whole token).')
    .option('--user <name>', 'only this user\'s tokens, grants and sessions')
    .option('--json', 'print JSON: one array, API tokens first ("kind": "api_token"), then OAuth grants ("kind": "oauth_grant"), then console sessions ("kind": "web_session")')
    .action(async (options: { user?: string; json?: boolean; dataDir: string }) => {
      await withApp(options.dataDir, async (app) => {
        const rows = await app.tokens.list(options.user);
        const grants = await grantsOf(app, options.user);
        const sessions = await sessionsOf(app, options.user);
        if (options.json) {
          const all = [...rows.map((r) => ({ kind: 'api_token', ...r })), ...grants.map((g) => ({ kind: 'oauth_grant', ...g })), ...sessions.map((w) => ({ kind: 'web_session', ...w }))];
          return void process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
        }
        if (rows.length === 0) process.stdout.write('No tokens.\n');
        else {
          printTable(
            ['ID', 'USER', 'TOKEN', 'STATE', 'CREATED', 'EXPIRES'],
            rows.map((r) => [r.id, r.user, r.prefix, r.state, r.createdAt, r.expiresAt ?? 'never']),
          );
        }
        if (grants.length > 0) {
          process.stdout.write('\nOAuth grants (hosts signed in with OAuth; token revoke ID revokes one with all its tokens):\n');
          printTable(
            ['ID', 'USER', 'CLIENT', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES'],
            grants.map((g) => [g.id, g.user, g.client.slice(0, 40), g.state, g.createdAt, g.lastUsedAt ?? 'never', g.expiresAt ?? '-']),
          );
        }
        if (sessions.length > 0) {
          process.stdout.write('\nWeb console sessions (token revoke ID signs one out):\n');
          printTable(
            ['ID', 'USER', 'SIGNED IN WITH', 'CREATED', 'EXPIRES'],
            sessions.map((w) => [w.id, w.user, w.signedInWith, w.createdAt, w.expiresAt]),
          );
        }
      });
    });
  token
    .command('revoke')
    .description('Revoke an API token, an OAuth grant with all its access and refresh tokens, or a web console session, by its id (from token list). Takes effect on the next request.')
    .argument('<id>', 'token, grant or console session id')
    .action(async (id: string, options: { dataDir: string }) => {
      await withApp(options.dataDir, async (app) => {
        if (await app.tokens.revoke(id)) return void process.stdout.write(`Revoked token ${id}.\n`);
        if (await app.oauthGrants.revokeGrant(id)) return void process.stdout.write(`Revoked OAuth grant ${id} and all its tokens.\n`);
        if (await app.webSessions.end(id)) return void process.stdout.write(`Ended web console session ${id}.\n`);
        process.stderr.write(`No token, OAuth grant or console session with id ${id}.\n`);
        process.exitCode = 1;
      });
    });

  program
    .command('login-code')
    .description('Print a one-time login code for an existing user: typed on the consent page when a remote MCP host signs in with OAuth, or on the sign-in page of the web console. Single use; the code is alone on the last line.')
    .requiredOption('--user <name>', 'user who signs in with the code')
    .option('--expires-in <duration>', 'lifetime such as 10m or 1h (default 10m, at most 1d)')
    .action(async (options: { user: string; expiresIn?: string; dataDir: string }) => {
      const ttlMs = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      await withApp(options.dataDir, async (app) => {
        const code = await app.loginCodes.create(options.user, ttlMs === undefined ? undefined : Math.ceil(ttlMs / 1000));
        const minutes = Math.round((ttlMs ?? 600_000) / 60_000);
        process.stdout.write(`One-time login code for user "${options.user}" (valid ${minutes >= 1 ? `${minutes} min` : 'under a minute'}, single use):\n${code}\n`);
      });
    });

  const user = program.command('user').description('Manage users and their plans.');
  user
    .command('list')
    .description('List users with their plans.')
    .action(async (options: { dataDir: string }) => {
      await withApp(options.dataDir, async (app) => {
        const rows = await app.users.list();
        if (rows.length === 0) return void process.stdout.write('No users.\n');
        printTable(['USER', 'PLAN', 'CREATED'], rows.map((r) => [r.name, r.plan, r.createdAt]));
      });
    });
  user
    .command('set-plan')
    .description('Put a user on a plan (free, pro, or one from --plans FILE); creates the user if new.')
    .argument('<name>', 'user name')
    .argument('<plan>', 'plan name')
    .action(async (name: string, plan: string, options: { dataDir: string; plans?: string }) => {
      await withApp(options.dataDir, async (app) => {
        if (!app.plans[plan]) {
          process.stderr.write(`Unknown plan "${plan}". Plans: ${Object.keys(app.plans).join(', ')}.\n`);
          process.exitCode = 1;
          return;
        }
        await app.tokens.setPlan(name, plan);
        process.stdout.write(`User "${name}" is on plan "${plan}".\n`);
      }, options.plans);
    });

  program
    .command('migrate')
    .description('Apply the database migrations (serve also does this at start).')
    .action(async (options: { dataDir: string }) => {
      const file = join(resolve(options.dataDir), 'mobile-builder.db');
      await openStoreForMigrate(options.dataDir);
      process.stdout.write(`Database is up to date: ${file}\n`);
    });
  addSettings(program);
  return program;
}

/** OAuth grants of every user or of `userName` (none for an unknown user). */
async function grantsOf(app: App, userName?: string) {
  if (userName === undefined) return app.oauthGrants.list();
  const user = await app.users.findByName(userName);
  return user ? app.oauthGrants.list(user.id) : [];
}

async function sessionsOf(app: App, userName?: string) {
  if (userName === undefined) return app.webSessions.list();
  const user = await app.users.findByName(userName);
  return user ? app.webSessions.list(user.id) : [];
}

function parseDurationOption(text: string): number {
  // Thrown inside an action, so a plain Error: `run` prints it and exits 1.
  return parseDuration(text);
}

async function openStoreForMigrate(dataDir: string): Promise<void> {
  const app = await openApp({ dataDir: resolve(dataDir), logger: createLogger('warn') });
  await app.store.close();
}

/** Runs a short command against the store, without starting the engine. */
async function withApp(dataDir: string, fn: (app: App) => Promise<void>, plansFile?: string): Promise<void> {
  const app = await openApp({ dataDir: resolve(dataDir), logger: createLogger('warn'), ...(plansFile && { plansFile }) });
  try {
    await fn(app);
  } finally {
    await app.store.close();
  }
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n`);
}

async function serve(options: ServeOptions): Promise<void> {
  const logger = createLogger(options.logLevel);
  const sandbox = buildSandboxFor(options);
  const config = appConfigOf(options, { logger, sandbox });
  // The builders' start-up checks: a bad signing key fails at start, not on a phone's first request.
  checkBuilderSettings(config);
  const app = await openApp(config);
  await app.start();
  const httpOptions = {
    host: options.host,
    bodyLimitBytes: options.bodyLimit,
    ...(options.allowedHosts && { allowedHosts: options.allowedHosts }),
  };

  let http: RunningHttpServer | undefined;
  let artifacts: RunningHttpServer | undefined;
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    await Promise.all([http?.close(), artifacts?.close()]);
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  if (options.http) {
    http = await listenHttp(app, { ...httpOptions, port: options.port, serveMcp: true });
    // Previews, deployments and updates also get their own origin (the next free port), so a
    // preview may keep its origin (localStorage) without ever sharing one with /mcp.
    artifacts = await startArtifactListener(app, httpOptions, options.port === 0 ? 0 : http.port + 1);
    logger.info({ url: `${http.url}/mcp`, artifacts: app.publicUrl.artifacts(), previews: previewsShown(app), dataDir: config.dataDir, builder: options.builder, ...(config.trustProxy && { trustProxy: config.trustProxy }) }, 'serving MCP over streamable HTTP');
    warnAboutPreviewHosts(app);
    process.stderr.write(`mobile-builder-mcp ${VERSION} listening on ${http.url}/mcp, artifacts on ${artifacts.url} (web previews: ${previewsShown(app)}; data: ${config.dataDir}); web console: ${http.url}/; ${sandboxLine(sandbox)}\n`);
    return;
  }

  const token = process.env[SETTINGS.apiToken.env]?.trim() || undefined;
  await warnAboutToken(app, token, config.dataDir);
  // The protocol first: hosts wait for the answer to `initialize`; previews can wait a moment. The
  // preview listener (and the HTTP side it loads) starts once that answer is written. One stdio
  // line is one message: --body-limit bounds it as it bounds an HTTP body.
  // Later messages wait until the listener is bound, so preview links name its real port.
  let firstReply!: () => void;
  const answered = new Promise<void>((resolve) => (firstReply = resolve));
  let listening!: () => void;
  const listened = new Promise<void>((resolve) => (listening = resolve));
  const served = serveStdio(app, { token, lineLimit: options.bodyLimit, onFirstReply: () => firstReply(), laterMessagesAfter: listened });
  await Promise.race([answered, served]);
  // stdio: a loopback listener serves the previews; a busy port falls back to any free one.
  try {
    http = await listenHttp(app, { ...httpOptions, port: options.port, serveMcp: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    http = await listenHttp(app, { ...httpOptions, port: 0, serveMcp: false });
    logger.warn({ port: options.port, using: http.port }, 'preview port in use; serving previews on another port');
  } finally {
    listening();
  }
  logger.info({ previews: http.url, dataDir: config.dataDir, builder: options.builder }, 'serving MCP over stdio');
  // One user over stdio: builds may run unconfined, and the operator is told so once.
  if (sandbox.kind === 'none') logger.warn({ reason: sandbox.reason }, sandboxLine(sandbox));
  else logger.info(sandboxLine(sandbox));
  await served;
  await stop('stdin closed');
}

/** Where web previews are served, for the start-up line: `http://<project-id>.localhost:3334/` or the path form. */
function previewsShown(app: App): string {
  return app.publicUrl.origins === 'shared' ? `${app.publicUrl.artifacts()}/previews/<id>/ (shared, opaque origins)` : `${app.publicUrl.projectOrigin('<project-id>')}/`;
}

/**
 * Per-project origins under an address that is not loopback (a LAN IP) fall back to
 * `<project-id>.localhost`, which only a browser on this machine reaches: the operator is told how
 * to serve them to other machines. Phones are unaffected (Expo updates stay on the shared host).
 */
function warnAboutPreviewHosts(app: App): void {
  if (app.publicUrl.origins === 'shared') return;
  const host = new URL(app.publicUrl.artifacts()).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 || isLoopbackHostname(host)) return;
  app.logger.warn(
    { artifacts: app.publicUrl.artifacts() },
    'web previews are served at http://<project-id>.localhost, which only a browser on this machine opens: for other machines pass --artifact-url with a wildcard DNS name (README "Previews and deployments"), or --artifact-origins shared',
  );
}

/** The start-up line's words about the sandbox: `builds sandboxed (bubblewrap)` or `builds NOT sandboxed (why)`. */
function sandboxLine(sandbox: BuildSandbox): string {
  return sandbox.kind === 'bubblewrap' ? 'builds sandboxed (bubblewrap)' : `builds NOT sandboxed (${sandbox.reason ?? 'no sandbox'})`;
}

/**
 * The sandbox of this server's builds. `serve --http` serves every user who holds a token or
 * signs in, so it refuses to start when its builds would run unconfined, unless the operator
 * says so with `--no-build-sandbox`; a builder that starts no process (scripted) needs none.
 * @throws Error naming the reason and both ways out.
 */
function buildSandboxFor(options: ServeOptions): BuildSandbox {
  if (!options.buildSandbox) return SANDBOX_TURNED_OFF;
  const sandbox = detectBuildSandbox();
  if (sandbox.kind === 'none' && options.http && builderRunsProcesses(options.builder)) {
    throw new Error(
      `serve --http runs builds for every user who signs in, and no build sandbox can be made here: ${sandbox.reason}. ` +
        'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, ' +
        "or pass --no-build-sandbox (SVC_NO_BUILD_SANDBOX=1) to run every build with this server's rights.",
    );
  }
  return sandbox;
}

/**
 * Tells the operator at start when the stdio token cannot work in this data dir (a token is
 * only valid in the store that issued it). Names the data dir, never the token.
 */
async function warnAboutToken(app: App, token: string | undefined, dataDir: string): Promise<void> {
  const fix = `create one with: mobile-builder-mcp token create --user NAME --data-dir ${dataDir}`;
  if (!token) {
    app.logger.warn({ dataDir }, `SVC_API_TOKEN is not set: tools are listed, but every tool call answers -32001; ${fix}`);
    return;
  }
  const state = await app.tokens.stateOf(token);
  if (state === 'active') return;
  const what = {
    malformed: 'is not an API token of this server (they start with svc_)',
    unknown: `is not known in the data dir ${dataDir} (tokens are valid only in the data dir that issued them: check --data-dir / SVC_DATA_DIR)`,
    revoked: `was revoked in the data dir ${dataDir}`,
    expired: `has expired in the data dir ${dataDir}`,
  }[state];
  app.logger.warn({ dataDir, tokenState: state }, `SVC_API_TOKEN ${what}: every tool call will answer -32001; ${fix}`);
}

/**
 * Opens the service on `dataDir`, turning a data dir that cannot be created or written into a
 * message with the path and the fix.
 * @throws Error naming the data dir and what to do.
 */
async function openApp(config: AppConfig): Promise<App> {
  const dir = config.dataDir;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
    const db = join(dir, 'mobile-builder.db');
    if (existsSync(db)) accessSync(db, constants.R_OK | constants.W_OK);
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

/** Starts the artifact origin's listener on `port` or the next free one after it (any, for 0). */
async function startArtifactListener(app: App, httpOptions: { host: string; bodyLimitBytes: number; allowedHosts?: string[] }, port: number): Promise<RunningHttpServer> {
  for (let candidate = port; ; candidate++) {
    try {
      return await listenHttp(app, { ...httpOptions, port: candidate, serveMcp: false, artifactOrigin: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0 || candidate >= port + 50 || candidate >= 65535) throw error;
    }
  }
}

/** Entry point of the bin. Exits non-zero with a message on stderr for bad usage or a failed command. */
export async function run(argv: string[]): Promise<void> {
  const program = buildProgram();
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
    process.exitCode = 1;
  }
}
