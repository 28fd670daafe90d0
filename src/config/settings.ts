/**
 * The table of every setting the command line takes (docs/cli.md#command-line shows the same
 * table, and `tests/config-table.test.ts` checks that the two agree): its flag, its environment
 * variable, its default, its unit, one line of help, the parser that checks a value, and the
 * commands that take it. Commander's options (`--help` included) are generated from it, and its
 * defaults are the ones `createApp` falls back to (`core/defaults.ts`).
 *
 * A new setting is one row here (and one in the table of docs/cli.md); `serve` maps it into
 * `AppConfig` in `serve-options.ts`. A command's own operands (`--user`, `--expires-in`,
 * `--json`, positional arguments) are not settings: they have no environment variable and are
 * declared with their command.
 */
import { Option } from 'commander';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { BUILDER_NAMES } from '../builders/builder-registry.js';
import { AGENT_MODES, DEFAULT_EXPO_SDKS } from '../builders/expo/index.js';
import { ARTIFACT_ORIGIN_MODES } from '../services/public-url.js';
import { postgresUrl } from './database-url.js';
import { DEFAULTS } from '../core/defaults.js';
import { ROLES } from '../roles.js';
import { commaList, expoSdks, trustedProxies, wholeNumber } from './value-parsers.js';

/** The commands of the command line that take settings. */
type CommandName =
  | 'serve'
  | 'worker'
  | 'toolchain install'
  | 'token create'
  | 'token list'
  | 'token revoke'
  | 'login-code'
  | 'user list'
  | 'user set-plan'
  | 'env set'
  | 'env list'
  | 'env unset'
  | 'migrate';

const EVERY_COMMAND: readonly CommandName[] = [
  'serve',
  'worker',
  'toolchain install',
  'token create',
  'token list',
  'token revoke',
  'login-code',
  'user list',
  'user set-plan',
  'env set',
  'env list',
  'env unset',
  'migrate',
];

/** The commands that open the store (every one but `toolchain install`). */
const STORE_COMMANDS: readonly CommandName[] = [
  'serve',
  'worker',
  'token create',
  'token list',
  'token revoke',
  'login-code',
  'user list',
  'user set-plan',
  'env set',
  'env list',
  'env unset',
  'migrate',
];

/** The commands that run the service: a server (`serve`, any role) and a build worker. */
const NODES: readonly CommandName[] = ['serve', 'worker'];

/** One row of the table. */
export interface Setting {
  /** Commander's flags (`--port <port>`, `--http`, `--no-build-sandbox`); absent for a setting read only from the environment. */
  flags?: string;
  /** The environment variable that gives the value when the flag is absent. */
  env?: string;
  /** The value when neither flag nor variable is given (absent: unset, or a default that depends on other settings, see `defaultShown`). */
  default?: string | number | readonly number[];
  /** How `--help` and docs/cli.md show the default, when not the value itself. */
  defaultShown?: string;
  /** Unit of a number (`ms`, `bytes`, `seconds`), or what it counts. */
  unit?: string;
  /** One line of help, as `--help` prints it. */
  help: string;
  /** The accepted values, for a setting that names one of a few. */
  choices?: readonly string[];
  /** Checks and converts a value; throws commander's `InvalidArgumentError` with the message the user sees. */
  parse?: (value: string) => unknown;
  /** The commands that take it. */
  commands: readonly CommandName[];
}

/** Every setting, in the order `--help` and docs/cli.md list them. */
export const SETTINGS = {
  http: {
    flags: '--http',
    env: 'SVC_HTTP',
    help: 'serve streamable HTTP on POST /mcp instead of stdio',
    commands: ['serve'],
  },
  role: {
    flags: '--role <role>',
    env: 'SVC_ROLE',
    default: DEFAULTS.role,
    help: 'all: MCP and builds in one process; api: MCP, console, OAuth and artifacts, no builds (workers build); worker: the worker command (no MCP, no --http)',
    choices: ROLES,
    commands: ['serve'],
  },
  host: {
    flags: '--host <host>',
    env: 'SVC_HOST',
    default: DEFAULTS.host,
    help: 'HTTP bind address (also of --health-port)',
    commands: NODES,
  },
  port: {
    flags: '--port <port>',
    env: 'SVC_PORT',
    defaultShown: `${DEFAULTS.port} (stdio: any free port)`,
    help: 'HTTP port (0 = any free port); in stdio mode, the port of the preview server (any free one unless set)',
    parse: wholeNumber('--port'),
    commands: ['serve'],
  },
  healthPort: {
    flags: '--health-port <port>',
    env: 'SVC_HEALTH_PORT',
    help: 'port of a listener that answers only GET /healthz (0 = any free port, printed at start); none by default',
    parse: wholeNumber('--health-port'),
    commands: NODES,
  },
  dataDir: {
    flags: '--data-dir <dir>',
    env: 'SVC_DATA_DIR',
    default: join(homedir(), '.mobile-builder-mcp'),
    defaultShown: '~/.mobile-builder-mcp',
    help: 'folder of the SQLite store, workspaces and artifacts',
    commands: EVERY_COMMAND,
  },
  databaseUrl: {
    flags: '--database-url <url>',
    env: 'SVC_DATABASE_URL',
    help: 'postgres:// or postgresql:// URL: the store is that PostgreSQL database (for several nodes and workers); default the SQLite file in --data-dir',
    parse: postgresUrl('--database-url', 'SVC_DATABASE_URL', 'keep the SQLite store in --data-dir'),
    commands: STORE_COMMANDS,
  },
  dbPoolSize: {
    flags: '--db-pool-size <n>',
    env: 'SVC_DB_POOL_SIZE',
    default: DEFAULTS.dbPoolSize,
    unit: 'connections',
    help: 'PostgreSQL connections of this process, besides its one listener',
    parse: wholeNumber('--db-pool-size', 1),
    commands: NODES,
  },
  databaseListenUrl: {
    flags: '--database-listen-url <url>',
    env: 'SVC_DATABASE_LISTEN_URL',
    defaultShown: '--database-url',
    help: 'session-mode PostgreSQL URL of the LISTEN connection, when --database-url goes through a transaction-mode pooler',
    parse: postgresUrl('--database-listen-url', 'SVC_DATABASE_LISTEN_URL', 'listen through --database-url'),
    commands: NODES,
  },
  builder: {
    flags: '--builder <name>',
    env: 'SVC_BUILDER',
    default: DEFAULTS.builder,
    help: 'building agent: expo (real Expo apps), scripted (a fast simulation for tests and demos) or command (your own commands)',
    choices: BUILDER_NAMES,
    commands: NODES,
  },
  builderConfig: {
    flags: '--builder-config <file>',
    env: 'SVC_BUILDER_CONFIG',
    help: 'JSON config of the command builder',
    commands: NODES,
  },
  publicUrl: {
    flags: '--public-url <url>',
    env: 'SVC_PUBLIC_URL',
    help: 'base URL of preview links (default from host and port)',
    commands: ['serve'],
  },
  scriptedStepMs: {
    flags: '--scripted-step-ms <ms>',
    env: 'SVC_SCRIPTED_STEP_MS',
    default: DEFAULTS.scriptedStepMs,
    unit: 'ms',
    help: 'pause per step of the scripted builder',
    parse: wholeNumber('--scripted-step-ms'),
    commands: NODES,
  },
  maxConcurrentWorkflows: {
    flags: '--max-concurrent-workflows <n>',
    env: 'SVC_MAX_CONCURRENT_WORKFLOWS',
    default: DEFAULTS.maxConcurrentWorkflows,
    unit: 'workflows',
    help: 'workflows running at once',
    parse: wholeNumber('--max-concurrent-workflows', 1),
    commands: NODES,
  },
  leaseMs: {
    flags: '--lease-ms <ms>',
    env: 'SVC_LEASE_MS',
    default: DEFAULTS.leaseMs,
    unit: 'ms',
    help: 'lease of a running workflow: another server sharing the data dir takes it over this long after its server stops renewing it',
    parse: wholeNumber('--lease-ms', 200),
    commands: NODES,
  },
  claimWaitMs: {
    flags: '--claim-wait-ms <ms>',
    env: 'SVC_CLAIM_WAIT_MS',
    default: DEFAULTS.claimWaitMs,
    unit: 'ms',
    help: "api role: how long svc_send_message waits for a worker to claim an idle project's new workflow before it answers queued",
    parse: wholeNumber('--claim-wait-ms'),
    commands: ['serve'],
  },
  drainTimeoutMs: {
    flags: '--drain-timeout-ms <ms>',
    env: 'SVC_DRAIN_TIMEOUT_MS',
    default: DEFAULTS.drainTimeoutMs,
    unit: 'ms',
    help: 'worker role: on SIGTERM, how long running builds may finish before they are interrupted',
    parse: wholeNumber('--drain-timeout-ms'),
    commands: NODES,
  },
  plans: {
    flags: '--plans <file>',
    env: 'SVC_PLANS_FILE',
    help: 'JSON file of plan limits',
    commands: ['serve', 'worker', 'user set-plan'],
  },
  allowedHosts: {
    flags: '--allowed-hosts <list>',
    env: 'SVC_ALLOWED_HOSTS',
    help: 'comma-separated extra host names accepted in Host/Origin',
    parse: commaList,
    commands: ['serve'],
  },
  trustProxy: {
    flags: '--trust-proxy <list>',
    env: 'SVC_TRUST_PROXY',
    help: 'comma-separated addresses or CIDR ranges of your reverse proxies (or loopback): their X-Forwarded-For names the client',
    parse: trustedProxies,
    commands: ['serve'],
  },
  metricsToken: {
    flags: '--metrics-token <token>',
    env: 'SVC_METRICS_TOKEN',
    help: 'bearer token that lets a client off loopback read GET /metrics (pass it in the environment); without it, loopback clients only',
    commands: ['serve', 'worker'],
  },
  metricsPublic: {
    flags: '--metrics-public',
    env: 'SVC_METRICS_PUBLIC',
    help: 'let every client read GET /metrics, for a private network (the metrics name no user or project)',
    commands: ['serve', 'worker'],
  },
  bodyLimit: {
    flags: '--body-limit <bytes>',
    env: 'SVC_BODY_LIMIT',
    default: DEFAULTS.bodyLimitBytes,
    unit: 'bytes',
    help: 'largest request body (HTTP) and largest message line (stdio)',
    parse: wholeNumber('--body-limit', 1),
    commands: ['serve'],
  },
  maxConcurrentRequests: {
    flags: '--max-concurrent-requests <n>',
    env: 'SVC_MAX_CONCURRENT_REQUESTS',
    default: DEFAULTS.maxConcurrentRequests,
    unit: 'requests',
    help: 'authenticated MCP requests handled at once over HTTP (an open svc_get_session wait holds one); more get 429',
    parse: wholeNumber('--max-concurrent-requests', 1),
    commands: ['serve'],
  },
  logLevel: {
    flags: '--log-level <level>',
    env: 'SVC_LOG_LEVEL',
    default: DEFAULTS.logLevel,
    help: 'fatal, error, warn, info, debug or silent',
    commands: NODES,
  },
  expoSdks: {
    flags: '--expo-sdks <list>',
    env: 'SVC_EXPO_SDKS',
    default: DEFAULT_EXPO_SDKS,
    defaultShown: DEFAULT_EXPO_SDKS.join(','),
    help: 'comma-separated Expo SDKs of the expo builder: a deploy serves each to the Expo Go that runs it; the first is the SDK of new apps, previews and type checks',
    parse: expoSdks,
    commands: NODES,
  },
  agent: {
    flags: '--agent <mode>',
    env: 'SVC_AGENT',
    defaultShown: 'host, or command with --agent-command',
    help: "who writes the expo app's code: host (the MCP host's own model, through code questions), command (--agent-command) or none (deterministic edits only); default host, or command when --agent-command is set",
    choices: AGENT_MODES,
    commands: NODES,
  },
  agentCommand: {
    flags: '--agent-command <cmd>',
    env: 'SVC_AGENT_COMMAND',
    help: 'code agent the expo builder runs in the workspace (shell command line; implies --agent command)',
    commands: NODES,
  },
  agentTimeout: {
    flags: '--agent-timeout <seconds>',
    env: 'SVC_AGENT_TIMEOUT',
    default: DEFAULTS.agentTimeoutSeconds,
    unit: 'seconds',
    help: 'limit of one code agent run',
    parse: wholeNumber('--agent-timeout', 1),
    commands: NODES,
  },
  artifactUrl: {
    flags: '--artifact-url <url>',
    env: 'SVC_ARTIFACT_URL',
    defaultShown: 'the next free port after --port',
    help: 'public base URL of previews, deployments and updates (default: the artifact listener on the next free port after --port)',
    commands: ['serve'],
  },
  artifactOrigins: {
    flags: '--artifact-origins <mode>',
    env: 'SVC_ARTIFACT_ORIGINS',
    default: DEFAULTS.artifactOrigins,
    help: "per-project: each project's previews and web deployments on their own origin (<project-id>.localhost, or <project-id>.<artifact host> behind --artifact-url: a wildcard DNS name); shared: all under one host (the path form), every page in an opaque origin",
    choices: ARTIFACT_ORIGIN_MODES,
    commands: ['serve'],
  },
  updatesSigningKey: {
    flags: '--updates-signing-key <file>',
    env: 'SVC_UPDATES_SIGNING_KEY',
    help: 'PEM RSA private key that signs Expo Updates manifests (keyid "main")',
    commands: ['serve'],
  },
  browser: {
    flags: '--browser <path>',
    env: 'SVC_BROWSER',
    defaultShown: '/usr/bin/chromium, else one on PATH',
    help: 'Chromium or Chrome that renders preview screenshots (default /usr/bin/chromium, else one on PATH; a path that names no file turns screenshots off)',
    commands: ['serve'],
  },
  buildSandbox: {
    flags: '--no-build-sandbox',
    env: 'SVC_NO_BUILD_SANDBOX',
    help: "run build processes without the bubblewrap sandbox (needed for serve --http or a worker where bubblewrap cannot work; builds then run with the server's rights)",
    commands: NODES,
  },
  agentNetwork: {
    flags: '--agent-network',
    env: 'SVC_AGENT_NETWORK',
    help: 'let the code agent (--agent-command) reach the network, for a hosted model',
    commands: NODES,
  },
  agentEnv: {
    flags: '--agent-env <names>',
    env: 'SVC_AGENT_ENV',
    help: 'comma-separated variables of this environment handed to the code agent (its API key); none by default',
    parse: commaList,
    commands: NODES,
  },
  maxHeavySteps: {
    flags: '--max-heavy-steps <n>',
    env: 'SVC_MAX_HEAVY_STEPS',
    default: DEFAULTS.maxHeavySteps,
    unit: 'steps',
    help: 'type checks and exports of the expo builder running at once',
    parse: wholeNumber('--max-heavy-steps', 1),
    commands: NODES,
  },
  artifactCacheMb: {
    flags: '--artifact-cache-mb <n>',
    env: 'SVC_ARTIFACT_CACHE_MB',
    default: DEFAULTS.artifactCacheMb,
    unit: 'MiB',
    help: "PostgreSQL store: this node's disk cache of artifacts read from the database (least recently used go first)",
    parse: wholeNumber('--artifact-cache-mb'),
    commands: NODES,
  },
  workspaceSnapshotMaxMb: {
    flags: '--workspace-snapshot-max-mb <n>',
    env: 'SVC_WORKSPACE_SNAPSHOT_MAX_MB',
    default: DEFAULTS.workspaceSnapshotMaxMb,
    unit: 'MiB',
    help: 'PostgreSQL store: a larger workspace is not snapshotted after a completed workflow (the next build elsewhere starts from the last one that fit)',
    parse: wholeNumber('--workspace-snapshot-max-mb'),
    commands: NODES,
  },
  secretsKeyFile: {
    flags: '--secrets-key-file <file>',
    env: 'SVC_SECRETS_KEY_FILE',
    defaultShown: '<data dir>/secrets.key',
    help: "key that seals projects' secrets in the store (created on first use; give every node of one database the same file)",
    commands: [...NODES, 'env set', 'env list', 'env unset'],
  },
  sdk: {
    flags: '--sdk <list>',
    env: 'SVC_EXPO_SDKS',
    default: DEFAULT_EXPO_SDKS,
    defaultShown: DEFAULT_EXPO_SDKS.join(','),
    help: 'comma-separated Expo SDKs to install',
    parse: expoSdks,
    commands: ['toolchain install'],
  },
  apiToken: {
    env: 'SVC_API_TOKEN',
    help: 'the API token of the stdio transport (every tool call answers -32001 without one)',
    commands: ['serve'],
  },
  runnerHost: {
    env: 'SVC_RUNNER_HOST',
    defaultShown: "the machine's host name",
    help: "this server's host in workflow leases, for containers that share a data dir volume under the same host name",
    commands: NODES,
  },
} as const satisfies Record<string, Setting>;

/** The name of a setting: the key commander gives its parsed value (`--lease-ms` is `leaseMs`). */
type SettingName = keyof typeof SETTINGS;

/** The settings as a list of `[name, row]`, in table order. */
export function settingRows(): [SettingName, Setting][] {
  return Object.entries(SETTINGS) as [SettingName, Setting][];
}

/** The default as `--help` and docs/cli.md show it, or undefined when there is none. */
export function shownDefault(setting: Setting): string | undefined {
  return setting.defaultShown ?? (setting.default === undefined ? undefined : String(setting.default));
}

/**
 * Commander's options for `command` (its name with its parent's: `token create`), generated from
 * the table in its order: flags, help, the environment fallback, choices, default and parser.
 * Settings read only from the environment have no option; a command the table does not name has
 * none.
 */
export function optionsFor(command: string): Option[] {
  const options: Option[] = [];
  for (const [, setting] of settingRows()) {
    if (!setting.flags || !(setting.commands as readonly string[]).includes(command)) continue;
    const option = new Option(setting.flags, setting.help);
    if (setting.choices) option.choices(setting.choices);
    if (setting.env) option.env(setting.env);
    if (setting.default !== undefined) option.default(setting.default, setting.defaultShown);
    if (setting.parse) option.argParser(setting.parse);
    options.push(option);
  }
  return options;
}
