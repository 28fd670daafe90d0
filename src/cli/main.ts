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
import { Command, InvalidArgumentError, Option } from 'commander';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { BUILDER_NAMES, createApp, listenHttp, VERSION, type App, type AppConfig, type BuilderName } from '../app.js';
import { parseDuration } from '../auth/api-token.js';
import { AGENT_MODES, DEFAULT_EXPO_SDK, SUPPORTED_EXPO_SDKS, toolchainFor, type AgentMode } from '../builders/expo/index.js';
import { parseTrustedProxies } from '../auth/client-address.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';
import { detectBuildSandbox, SANDBOX_TURNED_OFF, type BuildSandbox } from '../builders/process-sandbox.js';
import { createLogger } from '../logger.js';
import { ARTIFACT_ORIGIN_MODES, type ArtifactOrigins } from '../services/public-url.js';
import { serveStdio } from '../transports/stdio-server.js';
import type { RunningHttpServer } from '../transports/http-server.js';

const DEFAULT_DATA_DIR = join(homedir(), '.mobile-builder-mcp');

function positiveInt(name: string, min = 0) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}`);
    return n;
  };
}

function trustProxy(value: string): string[] {
  try {
    return parseTrustedProxies(value);
  } catch (error) {
    throw new InvalidArgumentError(`--trust-proxy: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function expoSdk(value: string): number {
  const n = Number(value);
  if (!(SUPPORTED_EXPO_SDKS as readonly number[]).includes(n)) throw new InvalidArgumentError(`supported Expo SDKs: ${SUPPORTED_EXPO_SDKS.join(', ')}`);
  return n;
}

function dataDirOption(): Option {
  return new Option('--data-dir <dir>', 'folder of the SQLite store, workspaces and artifacts').env('SVC_DATA_DIR').default(DEFAULT_DATA_DIR, '~/.mobile-builder-mcp');
}

/** Options of `serve`, after parsing. */
interface ServeOptions {
  http?: boolean;
  host: string;
  port: number;
  dataDir: string;
  builder: BuilderName;
  builderConfig?: string;
  publicUrl?: string;
  scriptedStepMs: number;
  maxConcurrentWorkflows: number;
  leaseMs: number;
  plans?: string;
  allowedHosts?: string;
  trustProxy?: string[];
  bodyLimit: number;
  logLevel: string;
  expoSdk: number;
  agentCommand?: string;
  agent?: AgentMode;
  agentTimeout: number;
  maxHeavySteps: number;
  updatesSigningKey?: string;
  artifactUrl?: string;
  artifactOrigins: ArtifactOrigins;
  browser?: string;
  /** false with `--no-build-sandbox` (or `SVC_NO_BUILD_SANDBOX`). */
  buildSandbox: boolean;
  agentNetwork?: boolean;
  agentEnv?: string;
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
    .addOption(new Option('--http', 'serve streamable HTTP on POST /mcp instead of stdio').env('SVC_HTTP'))
    .addOption(new Option('--host <host>', 'HTTP bind address').env('SVC_HOST').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'HTTP port (0 = any free port); in stdio mode, the port of the preview server').env('SVC_PORT').default(3333).argParser(positiveInt('--port')))
    .addOption(dataDirOption())
    .addOption(new Option('--builder <name>', 'building agent: expo (real Expo apps), scripted (a fast simulation for tests and demos) or command (your own commands)').choices(BUILDER_NAMES).env('SVC_BUILDER').default('expo'))
    .addOption(new Option('--builder-config <file>', 'JSON config of the command builder').env('SVC_BUILDER_CONFIG'))
    .addOption(new Option('--public-url <url>', 'base URL of preview links (default from host and port)').env('SVC_PUBLIC_URL'))
    .addOption(new Option('--scripted-step-ms <ms>', 'pause per step of the scripted builder').env('SVC_SCRIPTED_STEP_MS').default(500).argParser(positiveInt('--scripted-step-ms')))
    .addOption(new Option('--max-concurrent-workflows <n>', 'workflows running at once').env('SVC_MAX_CONCURRENT_WORKFLOWS').default(2).argParser(positiveInt('--max-concurrent-workflows', 1)))
    .addOption(new Option('--lease-ms <ms>', 'lease of a running workflow: another server sharing the data dir takes it over this long after its server stops renewing it').env('SVC_LEASE_MS').default(2500).argParser(positiveInt('--lease-ms', 200)))
    .addOption(new Option('--plans <file>', 'JSON file of plan limits').env('SVC_PLANS_FILE'))
    .addOption(new Option('--allowed-hosts <list>', 'comma-separated extra host names accepted in Host/Origin').env('SVC_ALLOWED_HOSTS'))
    .addOption(new Option('--trust-proxy <list>', 'comma-separated addresses or CIDR ranges of your reverse proxies (or loopback): their X-Forwarded-For names the client').env('SVC_TRUST_PROXY').argParser(trustProxy))
    .addOption(new Option('--body-limit <bytes>', 'largest request body').env('SVC_BODY_LIMIT').default(1024 * 1024).argParser(positiveInt('--body-limit', 1)))
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug or silent').env('SVC_LOG_LEVEL').default('info'))
    .addOption(new Option('--expo-sdk <n>', 'Expo SDK of the expo builder').env('SVC_EXPO_SDK').default(DEFAULT_EXPO_SDK).argParser(expoSdk))
    .addOption(new Option('--agent <mode>', "who writes the expo app's code: host (the MCP host's own model, through code questions), command (--agent-command) or none (deterministic edits only); default host, or command when --agent-command is set").choices(AGENT_MODES).env('SVC_AGENT'))
    .addOption(new Option('--agent-command <cmd>', 'code agent the expo builder runs in the workspace (shell command line; implies --agent command)').env('SVC_AGENT_COMMAND'))
    .addOption(new Option('--agent-timeout <seconds>', 'limit of one code agent run').env('SVC_AGENT_TIMEOUT').default(900).argParser(positiveInt('--agent-timeout', 1)))
    .addOption(new Option('--artifact-url <url>', 'public base URL of previews, deployments and updates (default: the artifact listener on the next free port after --port)').env('SVC_ARTIFACT_URL'))
    .addOption(
      new Option('--artifact-origins <mode>', 'per-project: each project\'s previews and web deployments on their own origin (<project-id>.localhost, or <project-id>.<artifact host> behind --artifact-url: a wildcard DNS name); shared: all under one host (the path form), every page in an opaque origin')
        .choices(ARTIFACT_ORIGIN_MODES)
        .env('SVC_ARTIFACT_ORIGINS')
        .default('per-project'),
    )
    .addOption(new Option('--updates-signing-key <file>', 'PEM RSA private key that signs Expo Updates manifests (keyid "main")').env('SVC_UPDATES_SIGNING_KEY'))
    .addOption(new Option('--browser <path>', 'Chromium or Chrome that renders preview screenshots (default /usr/bin/chromium, else one on PATH; a path that names no file turns screenshots off)').env('SVC_BROWSER'))
    .addOption(new Option('--no-build-sandbox', 'run build processes without the bubblewrap sandbox (needed for serve --http where bubblewrap cannot work; builds then run with the server\'s rights)').env('SVC_NO_BUILD_SANDBOX'))
    .addOption(new Option('--agent-network', 'let the code agent (--agent-command) reach the network, for a hosted model').env('SVC_AGENT_NETWORK'))
    .addOption(new Option('--agent-env <names>', 'comma-separated variables of this environment handed to the code agent (its API key); none by default').env('SVC_AGENT_ENV'))
    .addOption(new Option('--max-heavy-steps <n>', 'type checks and exports of the expo builder running at once').env('SVC_MAX_HEAVY_STEPS').default(1).argParser(positiveInt('--max-heavy-steps', 1)))
    .action(async (options: ServeOptions) => serve(options));

  program
    .command('toolchain')
    .description('Manage the expo builder\'s toolchain.')
    .command('install')
    .description('Install the Expo SDK toolchain ahead of its first use (npm ci from the lockfile shipped in this package; about 1-2 min).')
    .addOption(new Option('--sdk <n>', 'Expo SDK').env('SVC_EXPO_SDK').default(DEFAULT_EXPO_SDK).argParser(expoSdk))
    .addOption(dataDirOption())
    .action(async (options: { sdk: number; dataDir: string }) => {
      const toolchain = toolchainFor({ dataDir: resolve(options.dataDir), sdk: options.sdk });
      if (toolchain.isInstalled()) {
        process.stdout.write(`The Expo SDK ${options.sdk} toolchain is already installed: ${toolchain.dir}\n`);
        return;
      }
      await toolchain.ensure({ onProgress: (text) => process.stderr.write(`${text}\n`) });
      process.stdout.write(`Installed the Expo SDK ${options.sdk} toolchain: ${toolchain.dir}\n`);
    });

  const token = program.command('token').description('Manage API tokens.');
  token
    .command('create')
    .description('Create an API token (and the user, if new). Prints the token alone on the last line; it is not shown again.')
    .requiredOption('--user <name>', 'user the token acts for')
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h or 90m (default: no expiry)')
    .addOption(dataDirOption())
    .action((options: { user: string; expiresIn?: string; dataDir: string }) => {
      const expires = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      if (!/^[\w.@+-]{1,64}$/.test(options.user)) throw new Error('--user must be 1 to 64 letters, digits or . _ @ + -');
      withApp(options.dataDir, (app) => {
        const { token: secret, summary } = app.tokens.create(options.user, expires);
        const expiry = summary.expiresAt ? `expires ${summary.expiresAt}` : 'does not expire';
        process.stdout.write(`Created token ${summary.id} for user "${summary.user}" (${expiry}).\nStore it now: it is not shown again.\n${secret}\n`);
      });
    });
  token
    .command('list')
    .description('List API tokens, OAuth grants and web console sessions (never prints a whole token).')
    .option('--user <name>', 'only this user\'s tokens, grants and sessions')
    .option('--json', 'print JSON: one array, API tokens first ("kind": "api_token"), then OAuth grants ("kind": "oauth_grant"), then console sessions ("kind": "web_session")')
    .addOption(dataDirOption())
    .action((options: { user?: string; json?: boolean; dataDir: string }) => {
      withApp(options.dataDir, (app) => {
        const rows = app.tokens.list(options.user);
        const grants = grantsOf(app, options.user);
        const sessions = sessionsOf(app, options.user);
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
    .addOption(dataDirOption())
    .action((id: string, options: { dataDir: string }) => {
      withApp(options.dataDir, (app) => {
        if (app.tokens.revoke(id)) return void process.stdout.write(`Revoked token ${id}.\n`);
        if (app.oauthGrants.revokeGrant(id)) return void process.stdout.write(`Revoked OAuth grant ${id} and all its tokens.\n`);
        if (app.webSessions.end(id)) return void process.stdout.write(`Ended web console session ${id}.\n`);
        process.stderr.write(`No token, OAuth grant or console session with id ${id}.\n`);
        process.exitCode = 1;
      });
    });

  program
    .command('login-code')
    .description('Print a one-time login code for an existing user: typed on the consent page when a remote MCP host signs in with OAuth, or on the sign-in page of the web console. Single use; the code is alone on the last line.')
    .requiredOption('--user <name>', 'user who signs in with the code')
    .option('--expires-in <duration>', 'lifetime such as 10m or 1h (default 10m, at most 1d)')
    .addOption(dataDirOption())
    .action((options: { user: string; expiresIn?: string; dataDir: string }) => {
      const ttlMs = options.expiresIn === undefined ? undefined : parseDurationOption(options.expiresIn);
      withApp(options.dataDir, (app) => {
        const code = app.loginCodes.create(options.user, ttlMs === undefined ? undefined : Math.ceil(ttlMs / 1000));
        const minutes = Math.round((ttlMs ?? 600_000) / 60_000);
        process.stdout.write(`One-time login code for user "${options.user}" (valid ${minutes >= 1 ? `${minutes} min` : 'under a minute'}, single use):\n${code}\n`);
      });
    });

  const user = program.command('user').description('Manage users and their plans.');
  user
    .command('list')
    .description('List users with their plans.')
    .addOption(dataDirOption())
    .action((options: { dataDir: string }) => {
      withApp(options.dataDir, (app) => {
        const rows = app.users.list();
        if (rows.length === 0) return void process.stdout.write('No users.\n');
        printTable(['USER', 'PLAN', 'CREATED'], rows.map((r) => [r.name, r.plan, r.createdAt]));
      });
    });
  user
    .command('set-plan')
    .description('Put a user on a plan (free, pro, or one from --plans FILE); creates the user if new.')
    .argument('<name>', 'user name')
    .argument('<plan>', 'plan name')
    .addOption(dataDirOption())
    .addOption(new Option('--plans <file>', 'JSON file of plan limits').env('SVC_PLANS_FILE'))
    .action((name: string, plan: string, options: { dataDir: string; plans?: string }) => {
      withApp(options.dataDir, (app) => {
        if (!app.plans[plan]) {
          process.stderr.write(`Unknown plan "${plan}". Plans: ${Object.keys(app.plans).join(', ')}.\n`);
          process.exitCode = 1;
          return;
        }
        app.tokens.setPlan(name, plan);
        process.stdout.write(`User "${name}" is on plan "${plan}".\n`);
      }, options.plans);
    });

  program
    .command('migrate')
    .description('Apply the database migrations (serve also does this at start).')
    .addOption(dataDirOption())
    .action((options: { dataDir: string }) => {
      const file = join(resolve(options.dataDir), 'mobile-builder.db');
      openStoreForMigrate(options.dataDir);
      process.stdout.write(`Database is up to date: ${file}\n`);
    });
  return program;
}

/** OAuth grants of every user or of `userName` (none for an unknown user). */
function grantsOf(app: App, userName?: string) {
  if (userName === undefined) return app.oauthGrants.list();
  const user = app.users.findByName(userName);
  return user ? app.oauthGrants.list(user.id) : [];
}

function sessionsOf(app: App, userName?: string) {
  if (userName === undefined) return app.webSessions.list();
  const user = app.users.findByName(userName);
  return user ? app.webSessions.list(user.id) : [];
}

function parseDurationOption(text: string): number {
  // Thrown inside an action, so a plain Error: `run` prints it and exits 1.
  return parseDuration(text);
}

function openStoreForMigrate(dataDir: string): void {
  const app = openApp({ dataDir: resolve(dataDir), logger: createLogger('warn') });
  app.store.close();
}

/** Runs a short command against the store, without starting the engine. */
function withApp(dataDir: string, fn: (app: App) => void, plansFile?: string): void {
  const app = openApp({ dataDir: resolve(dataDir), logger: createLogger('warn'), ...(plansFile && { plansFile }) });
  try {
    fn(app);
  } finally {
    app.store.close();
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
  const config: AppConfig = {
    dataDir: resolve(options.dataDir),
    builder: options.builder,
    scriptedStepMs: options.scriptedStepMs,
    maxConcurrentWorkflows: options.maxConcurrentWorkflows,
    leaseMs: options.leaseMs,
    ...(options.trustProxy?.length && { trustProxy: options.trustProxy }),
    logger,
    expo: {
      sdk: options.expoSdk,
      agentTimeoutSeconds: options.agentTimeout,
      heavySteps: options.maxHeavySteps,
      ...(options.agentCommand && { agentCommand: options.agentCommand }),
      ...(options.agent && { agent: options.agent }),
      ...(options.agentNetwork && { agentNetwork: true }),
      ...(options.agentEnv && { agentEnv: options.agentEnv.split(',').map((n) => n.trim()).filter(Boolean) }),
    },
    buildSandbox: sandbox,
    ...(options.builderConfig && { builderConfigFile: resolve(options.builderConfig) }),
    ...(options.publicUrl && { publicUrl: options.publicUrl }),
    ...(options.artifactUrl && { artifactUrl: options.artifactUrl }),
    artifactOrigins: options.artifactOrigins,
    ...(options.plans && { plansFile: resolve(options.plans) }),
    ...(options.updatesSigningKey && { updatesSigningKeyFile: resolve(options.updatesSigningKey) }),
    ...(options.browser !== undefined && { browser: options.browser }),
  };
  // A bad signing key fails at start, not on a phone's first request.
  if (config.updatesSigningKeyFile) (await import('../transports/expo-updates-routes.js')).loadUpdatesSigningKey(config.updatesSigningKeyFile);
  const app = openApp(config);
  await app.start();
  const allowedHosts = options.allowedHosts?.split(',').map((h) => h.trim()).filter(Boolean);
  const httpOptions = {
    host: options.host,
    bodyLimitBytes: options.bodyLimit,
    ...(allowedHosts && { allowedHosts }),
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

  const token = process.env.SVC_API_TOKEN?.trim() || undefined;
  warnAboutToken(app, token, config.dataDir);
  // The protocol first: hosts wait for the answer to `initialize`; previews can wait a moment. The
  // preview listener (and the HTTP side it loads) starts once that answer is written.
  let firstReply!: () => void;
  const answered = new Promise<void>((resolve) => (firstReply = resolve));
  const served = serveStdio(app, { token, onFirstReply: () => firstReply() });
  await Promise.race([answered, served]);
  // stdio: a loopback listener serves the previews; a busy port falls back to any free one.
  try {
    http = await listenHttp(app, { ...httpOptions, port: options.port, serveMcp: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    http = await listenHttp(app, { ...httpOptions, port: 0, serveMcp: false });
    logger.warn({ port: options.port, using: http.port }, 'preview port in use; serving previews on another port');
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
 * says so with `--no-build-sandbox`; the scripted builder starts no process and needs none.
 * @throws Error naming the reason and both ways out.
 */
function buildSandboxFor(options: ServeOptions): BuildSandbox {
  if (!options.buildSandbox) return SANDBOX_TURNED_OFF;
  const sandbox = detectBuildSandbox();
  if (sandbox.kind === 'none' && options.http && options.builder !== 'scripted') {
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
function warnAboutToken(app: App, token: string | undefined, dataDir: string): void {
  const fix = `create one with: mobile-builder-mcp token create --user NAME --data-dir ${dataDir}`;
  if (!token) {
    app.logger.warn({ dataDir }, `SVC_API_TOKEN is not set: tools are listed, but every tool call answers -32001; ${fix}`);
    return;
  }
  const state = app.tokens.stateOf(token);
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
function openApp(config: AppConfig): App {
  const dir = config.dataDir;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
    const db = join(dir, 'mobile-builder.db');
    if (existsSync(db)) accessSync(db, constants.R_OK | constants.W_OK);
    return createApp(config);
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
