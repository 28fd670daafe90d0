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
 *   mobile-builder-mcp migrate [--database-url URL]
 *   mobile-builder-mcp toolchain install [--sdk 58,54]
 *
 * Every store command takes `--database-url` (PostgreSQL) or works on the SQLite file of
 * `--data-dir`. Every option has an `SVC_*` environment equivalent. Logs go to stderr; stdout carries only the
 * stdio protocol (serve) or the command's output.
 */
import { Command } from 'commander';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { createGateway, listenHttp, VERSION, type App } from '../app.js';
import { parseDuration } from '../auth/api-token.js';
import { toolchainsFor } from '../builders/expo/index.js';
import { redactedDatabaseUrl } from '../config/database-url.js';
import { DEFAULTS } from '../core/defaults.js';
import { appConfigOf, type ServeOptions, type WorkerOptions } from '../config/serve-options.js';
import { optionsFor, SETTINGS } from '../config/settings.js';
import { UsageError } from '../config/usage-error.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';
import { checkBuilderSettings } from '../builders/builder-registry.js';
import { createLogger } from '../logger.js';
import { serveStdio } from '../transports/stdio-server.js';
import type { EarlyStdioStart } from './early-stdio-start.js';
import type { RunningHttpServer } from '../transports/http-server.js';
import type { RunningHealthPort } from '../transports/health-server.js';
import type { AdmissionPolicy } from '../mcp/json-rpc-gateway.js';
import type { RequestOrigin } from '../auth/request-gate.js';
import { buildSandboxFor, sandboxLine } from './build-sandbox-choice.js';
import { openHealthPort } from './health-port.js';
import { openApp, storeShown, withApp, type StoreOptions } from './open-app.js';
import { runWorker } from './worker-command.js';
import { migratePostgresDatabase } from '../store/store.js';

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
 * Builds the program (exported for tests of the parser; `run` executes it).
 * @param early what the early start read and answered of stdin (`early-stdio-start.ts`), for `serve` over stdio.
 */
export function buildProgram(early?: EarlyStdioStart): Command {
  const program = new Command('mobile-builder-mcp')
    .description('An MCP server that manages native mobile app projects and runs their build and deploy workflows.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('serve')
    .description('Serve MCP over stdio (default; what MCP hosts launch) or streamable HTTP (--http).')
    .action(async (options: ServeOptions) => serve(options, early));

  program
    .command('worker')
    .description(
      'Run a build worker: claims and builds workflows from the store (PostgreSQL with --database-url; or a SQLite data dir shared with serve --role api on one host), serves no MCP. ' +
        'SIGTERM drains it: running builds finish (up to --drain-timeout-ms), then it exits.',
    )
    .action(async (options: WorkerOptions) => runWorker(options));

  program
    .command('toolchain')
    .description('Manage the expo builder\'s toolchain.')
    .command('install')
    .description('Install the Expo SDK toolchains ahead of their first use (npm install from the lockfiles shipped in this package; about 1-2 min each).')
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

  const token = program.command('token').description('Manage API tokens.');
  token
    .command('create')
    .description('Create an API token (and the user, if new). Prints the token alone on the last line; it is not shown again.')
    .requiredOption('--user <name>', 'user the token acts for')
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h or 90m (default: no expiry)')
    .option('--read-only', 'a token that lists and calls only the tools that read (annotated readOnlyHint); the others answer -32003')
    .action(async (options: StoreOptions & { user: string; expiresIn?: string; readOnly?: boolean }) => {
      const expires = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      if (!/^[\w.@+-]{1,64}$/.test(options.user)) throw new Error('--user must be 1 to 64 letters, digits or . _ @ + -');
      await withApp('token create', options, async (app) => {
        const { token: secret, summary } = await app.tokens.create(options.user, expires, options.readOnly === true);
        const expiry = summary.expiresAt ? `expires ${summary.expiresAt}` : 'does not expire';
        const kind = summary.readOnly ? 'read-only token' : 'token';
        process.stdout.write(`Created ${kind} ${summary.id} for user "${summary.user}" (${expiry}).\nStore it now: it is not shown again.\n${secret}\n`);
      });
    });
  token
    .command('list')
    .description('List API tokens, OAuth grants and web console sessions (never prints a whole token).')
    .option('--user <name>', 'only this user\'s tokens, grants and sessions')
    .option('--json', 'print JSON: one array, API tokens first ("kind": "api_token"), then OAuth grants ("kind": "oauth_grant"), then console sessions ("kind": "web_session")')
    .action(async (options: StoreOptions & { user?: string; json?: boolean }) => {
      await withApp('token list', options, async (app) => {
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
            ['ID', 'USER', 'TOKEN', 'STATE', 'ACCESS', 'CREATED', 'EXPIRES'],
            rows.map((r) => [r.id, r.user, r.prefix, r.state, r.readOnly ? 'read-only' : 'read-write', r.createdAt, r.expiresAt ?? 'never']),
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
    .description('Revoke an API token, an OAuth grant with all its access and refresh tokens, or a web console session, by its id (from token list). Servers on the same SQLite data dir refuse it from their next request after this command returns; PostgreSQL nodes once the revocation\'s notice reaches them (at its commit, normally within milliseconds; a node whose notice connection is down answers /healthz 503 and clears its caches when it is back).')
    .argument('<id>', 'token, grant or console session id')
    .action(async (id: string, options: StoreOptions) => {
      await withApp('token revoke', options, async (app) => {
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
    .action(async (options: StoreOptions & { user: string; expiresIn?: string }) => {
      const ttlMs = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      await withApp('login-code', options, async (app) => {
        const code = await app.loginCodes.create(options.user, ttlMs === undefined ? undefined : Math.ceil(ttlMs / 1000));
        const minutes = Math.round((ttlMs ?? 600_000) / 60_000);
        process.stdout.write(`One-time login code for user "${options.user}" (valid ${minutes >= 1 ? `${minutes} min` : 'under a minute'}, single use):\n${code}\n`);
      });
    });

  const user = program.command('user').description('Manage users and their plans.');
  user
    .command('list')
    .description('List users with their plans.')
    .action(async (options: StoreOptions) => {
      await withApp('user list', options, async (app) => {
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
    .action(async (name: string, plan: string, options: StoreOptions & { plans?: string }) => {
      await withApp('user set-plan', { ...options, ...(options.plans && { plans: resolve(options.plans) }) }, async (app) => {
        if (!app.plans[plan]) {
          process.stderr.write(`Unknown plan "${plan}". Plans: ${Object.keys(app.plans).join(', ')}.\n`);
          process.exitCode = 1;
          return;
        }
        await app.tokens.setPlan(name, plan);
        process.stdout.write(`User "${name}" is on plan "${plan}".\n`);
      });
    });

  program
    .command('migrate')
    .description('Apply the database migrations (serve and worker also do this at start): drizzle-pg/ to --database-url under an advisory lock, else drizzle/ to the SQLite file of --data-dir.')
    .action(async (options: StoreOptions) => {
      if (options.databaseUrl) {
        const applied = await migratePostgresDatabase(options.databaseUrl);
        const where = redactedDatabaseUrl(options.databaseUrl);
        process.stdout.write(applied === 0 ? `Database is up to date: ${where} (no migration to apply)\n` : `Applied ${applied} migration${applied === 1 ? '' : 's'}; database is up to date: ${where}\n`);
        return;
      }
      const file = join(resolve(options.dataDir), 'mobile-builder.db');
      await withApp('migrate', { dataDir: options.dataDir }, async () => undefined);
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

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n`);
}

async function serve(options: ServeOptions, early: EarlyStdioStart | undefined): Promise<void> {
  if (options.role === 'worker') {
    if (options.http) {
      throw new UsageError(
        'serve --role worker takes no --http: a worker serves no MCP (no stdio, no HTTP listener; --health-port P serves GET /healthz). Drop --http (or SVC_HTTP), or use --role api or all for the MCP side.',
      );
    }
    return runWorker(options);
  }
  const logger = createLogger(options.logLevel);
  // An API node builds nothing; the sandbox still confines the preview screenshot's browser. Over
  // stdio it is found on first use (a build, a screenshot) or after the answer to `initialize`,
  // for the start-up line: finding it runs bubblewrap once (docs/performance.md "Start-up time").
  const sandboxChoice = { buildSandbox: options.buildSandbox, builder: options.builder, multiUser: options.http === true && options.role === 'all', command: 'serve --http' };
  const sandbox = options.http || !options.buildSandbox ? buildSandboxFor(sandboxChoice) : undefined;
  const config = appConfigOf(options, { logger, sandbox, role: options.role });
  // The builders' start-up checks: a bad signing key fails at start, not on a phone's first request.
  checkBuilderSettings(config);
  const builds = () => (options.role === 'api' ? 'builds run on workers (role api)' : sandboxLine(sandbox ?? buildSandboxFor(sandboxChoice)));
  const database = options.databaseUrl ? `; database: ${redactedDatabaseUrl(options.databaseUrl)}` : '';
  const httpOptions = {
    host: options.host,
    bodyLimitBytes: options.bodyLimit,
    ...(options.allowedHosts && { allowedHosts: options.allowedHosts }),
  };

  let app: App | undefined;
  let http: RunningHttpServer | undefined;
  let artifacts: RunningHttpServer | undefined;
  let health: RunningHealthPort | undefined;
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    await Promise.all([http?.close(), artifacts?.close()]);
    await app?.close();
    await health?.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  const openHealth = async (opened: App) => {
    if (options.healthPort === undefined) return;
    health = await openHealthPort(opened, options.host, options.healthPort);
    logger.info({ health: `${health.url}/healthz`, role: opened.role }, 'health port listening');
  };

  if (options.http) {
    app = await openApp(config);
    await app.start();
    await openHealth(app);
    const port = options.port ?? DEFAULTS.port;
    http = await listenHttp(app, { ...httpOptions, port, serveMcp: true });
    // Previews, deployments and updates also get their own origin (the next free port), so a
    // preview may keep its origin (localStorage) without ever sharing one with /mcp.
    artifacts = await startArtifactListener(app, httpOptions, port === 0 ? 0 : http.port + 1);
    logger.info({ url: `${http.url}/mcp`, artifacts: app.publicUrl.artifacts(), previews: previewsShown(app), store: storeShown(options), role: app.role, builder: options.builder, ...(config.trustProxy && { trustProxy: config.trustProxy }) }, 'serving MCP over streamable HTTP');
    warnAboutPreviewHosts(app);
    const healthShown = health ? `; health: ${health.url}/healthz` : '';
    process.stderr.write(`mobile-builder-mcp ${VERSION} listening on ${http.url}/mcp, artifacts on ${artifacts.url} (web previews: ${previewsShown(app)}; data: ${config.dataDir}${database}${healthShown}); web console: ${http.url}/; ${builds()}\n`);
    return;
  }

  // stdio. The protocol first: hosts wait for the answer to `initialize`, which needs neither the
  // store nor the HTTP side. The store opens once that answer is written (or as soon as a message
  // needs it: a first message other than `initialize`), then the preview listener starts (docs/performance.md
  // "Start-up time"). Later messages wait until both are ready, so preview links name the
  // listener's real port. One stdio line is one message: --body-limit bounds it as it bounds an
  // HTTP body. After an early start (`early-stdio-start.ts`) the first line may be answered already:
  // the transport replays it and reads on from the byte after it.
  const token = process.env[SETTINGS.apiToken.env]?.trim() || undefined;
  const gateway = await createGateway({ logger });
  let opening: Promise<App> | undefined;
  const openNow = (): Promise<App> =>
    (opening ??= (async () => {
      const opened = await openApp({ ...config, gateway });
      app = opened;
      await opened.start();
      await warnAboutToken(opened, token, options);
      return opened;
    })());
  let firstReply!: () => void;
  const answered = new Promise<void>((resolve) => (firstReply = resolve));
  let listening!: () => void;
  const listened = new Promise<void>((resolve) => (listening = resolve));
  gateway.whenToolsNeeded(() => void openNow().catch(() => undefined));
  const served = serveStdio(
    { gateway, gate: { policy: (origin) => policyOnceOpen(openNow, origin) }, logger },
    { token, lineLimit: options.bodyLimit, onFirstReply: () => firstReply(), laterMessagesAfter: listened, ...early },
  );
  await Promise.race([answered, served]);
  let opened: App;
  try {
    opened = await openNow();
  } catch (error) {
    // Nothing more is read: the process ends with the reason on stderr (exit code 1).
    process.stdin.destroy();
    early?.input.destroy();
    throw error;
  }
  await openHealth(opened);
  // stdio: a loopback listener serves the previews, on any free port unless one is set (every
  // host launches its own process: a fixed port would be taken by the first); a busy port set
  // by the operator falls back to any free one.
  try {
    http = await listenHttp(opened, { ...httpOptions, port: options.port ?? 0, serveMcp: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    http = await listenHttp(opened, { ...httpOptions, port: 0, serveMcp: false });
    logger.warn({ port: options.port, using: http.port }, 'preview port in use; serving previews on another port');
  } finally {
    listening();
  }
  logger.info({ previews: http.url, store: storeShown(options), role: opened.role, builder: options.builder }, 'serving MCP over stdio');
  // The messages that waited for the listener are handled first: finding the sandbox runs bubblewrap synchronously.
  await new Promise((resolve) => setImmediate(resolve));
  // One user over stdio: builds may run unconfined, and the operator is told so once.
  const found = sandbox ?? buildSandboxFor(sandboxChoice);
  if (options.role === 'api') logger.info(builds());
  else if (found.kind === 'none') logger.warn({ reason: found.reason }, sandboxLine(found));
  else logger.info(sandboxLine(found));
  await served;
  await stop('stdin closed');
}

/**
 * The stdio admission policy before the app is open: `initialize` needs no caller over stdio
 * (docs/contract.md), so it is admitted at once; any other message opens the app (if the answer
 * to `initialize` has not already) and is admitted by its request gate.
 */
function policyOnceOpen(open: () => Promise<App>, origin: RequestOrigin): AdmissionPolicy {
  let policy: AdmissionPolicy | undefined;
  return async (method) => {
    if (method === 'initialize') return null;
    policy ??= (await open()).gate.policy(origin);
    return policy(method);
  };
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
    'web previews are served at http://<project-id>.localhost, which only a browser on this machine opens: for other machines pass --artifact-url with a wildcard DNS name (docs/builders.md "Previews and deployments"), or --artifact-origins shared',
  );
}

/**
 * Tells the operator at start when the stdio token cannot work in this data dir (a token is
 * only valid in the store that issued it). Names the data dir, never the token.
 */
async function warnAboutToken(app: App, token: string | undefined, options: StoreOptions): Promise<void> {
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
  const check = pg ? 'the database that issued them: check --database-url / SVC_DATABASE_URL' : 'the data dir that issued them: check --data-dir / SVC_DATA_DIR';
  const what = {
    malformed: 'is not an API token of this server (they start with svc_)',
    unknown: `is not known in ${where} (tokens are valid only in ${check})`,
    revoked: `was revoked in ${where}`,
    expired: `has expired in ${where}`,
  }[state];
  app.logger.warn({ ...logged, tokenState: state }, `SVC_API_TOKEN ${what}: every tool call will answer -32001; ${fix}`);
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
