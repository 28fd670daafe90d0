/**
 * The first thing a stdio start runs (docs/performance.md "Start-up time"). `bin/mobile-builder-mcp.js` loads
 * this file as a bundle of its own, `dist/mobile-builder-early.cjs` (a few KiB: no SDK, no zod, no
 * commander), before the main bundle. When the command line is a plain `serve` over stdio, it
 * reads the first line of stdin and, when that is a plainly valid `initialize`, writes the answer
 * at once (`mcp/early-initialize.ts`); the bin then loads the main bundle, whose stdio transport
 * replays that line through the gateway and serves everything after it, in order.
 *
 * "Plain" means that the command line's own parser (commander, in the main bundle) certainly
 * accepts it and that nothing it sets changes what is answered or how a line is read: `serve`
 * followed only by the options below with values they accept, and no variable of the settings table
 * set but those options' (with values they accept), `SVC_API_TOKEN` and `SVC_RUNNER_HOST` (read
 * after the answer). Any other command line (`--http`, `--body-limit`, `--help`, a bad
 * value, another command) is started by the main bundle alone, as before, and a bad option still
 * exits with code 2 and commander's message before anything is read.
 */
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { DEFAULTS } from '../core/defaults.js';
import { earlyInitializeReply } from '../mcp/early-initialize.js';
import { readFirstLine } from '../transports/stdio-first-line.js';

/** What the early start hands the main bundle's stdio transport. */
export interface EarlyStdioStart {
  /** stdin from its first unanswered byte on. */
  input: Readable;
  /** The first line and the answer written to it, when the early start answered it. */
  answered?: { line: string; reply: string };
}

/** Accepts the value of an option the early start knows. */
type ValueCheck = (value: string) => boolean;

const wholeNumber: ValueCheck = (value) => /^\d{1,9}$/.test(value);
const LOG_LEVELS: ReadonlySet<string> = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** The options of a plain stdio `serve`, with the environment variable of each, and the values taken without a doubt. */
const PLAIN_OPTIONS: ReadonlyMap<string, { env: string; check: ValueCheck }> = new Map([
  ['--data-dir', { env: 'SVC_DATA_DIR', check: (value) => value.length > 0 && !value.startsWith('-') }],
  ['--port', { env: 'SVC_PORT', check: wholeNumber }],
  ['--builder', { env: 'SVC_BUILDER', check: (value) => value === 'expo' || value === 'scripted' }],
  ['--log-level', { env: 'SVC_LOG_LEVEL', check: (value) => LOG_LEVELS.has(value) }],
  ['--scripted-step-ms', { env: 'SVC_SCRIPTED_STEP_MS', check: wholeNumber }],
]);

/**
 * The environment variables of the settings table (`config/settings.ts`, which this file does not
 * import: it brings commander; `tests/early-stdio-start.test.ts` keeps the two equal).
 */
export const SETTING_VARIABLES: readonly string[] = [
  'SVC_HTTP',
  'SVC_ROLE',
  'SVC_HOST',
  'SVC_PORT',
  'SVC_HEALTH_PORT',
  'SVC_DATA_DIR',
  'SVC_DATABASE_URL',
  'SVC_DB_POOL_SIZE',
  'SVC_DATABASE_LISTEN_URL',
  'SVC_BUILDER',
  'SVC_BUILDER_CONFIG',
  'SVC_PUBLIC_URL',
  'SVC_SCRIPTED_STEP_MS',
  'SVC_MAX_CONCURRENT_WORKFLOWS',
  'SVC_LEASE_MS',
  'SVC_CLAIM_WAIT_MS',
  'SVC_DRAIN_TIMEOUT_MS',
  'SVC_PLANS_FILE',
  'SVC_ALLOWED_HOSTS',
  'SVC_TRUST_PROXY',
  'SVC_METRICS_TOKEN',
  'SVC_METRICS_PUBLIC',
  'SVC_BODY_LIMIT',
  'SVC_MAX_CONCURRENT_REQUESTS',
  'SVC_LOG_LEVEL',
  'SVC_EXPO_SDKS',
  'SVC_AGENT',
  'SVC_AGENT_COMMAND',
  'SVC_AGENT_TIMEOUT',
  'SVC_ARTIFACT_URL',
  'SVC_ARTIFACT_ORIGINS',
  'SVC_UPDATES_SIGNING_KEY',
  'SVC_BROWSER',
  'SVC_NO_BUILD_SANDBOX',
  'SVC_AGENT_NETWORK',
  'SVC_AGENT_ENV',
  'SVC_MAX_HEAVY_STEPS',
  'SVC_ARTIFACT_CACHE_MB',
  'SVC_WORKSPACE_SNAPSHOT_MAX_MB',
  'SVC_SECRETS_KEY_FILE',
  'SVC_API_TOKEN',
  'SVC_RUNNER_HOST',
];

/** Variables of the table that a plain start may have with any value: they are read after the answer. */
const READ_LATER: ReadonlySet<string> = new Set(['SVC_API_TOKEN', 'SVC_RUNNER_HOST']);

/** Flags (no value) of a plain stdio `serve`. */
const PLAIN_FLAGS: ReadonlySet<string> = new Set(['--no-build-sandbox']);

/** True when `argv` (`process.argv`) and `env` start a plain `serve` over stdio (see the file's comment). */
export function isPlainStdioServe(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const args = argv.slice(2);
  if (args[0] !== 'serve') return false;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (PLAIN_FLAGS.has(arg)) continue;
    const equals = arg.indexOf('=');
    const name = equals > 0 ? arg.slice(0, equals) : arg;
    const option = PLAIN_OPTIONS.get(name);
    if (!option) return false;
    const value = equals > 0 ? arg.slice(equals + 1) : args[++i];
    if (value === undefined || !option.check(value)) return false;
  }
  const checks = new Map([...PLAIN_OPTIONS.values()].map(({ env: name, check }) => [name, check]));
  return SETTING_VARIABLES.every((name) => {
    const value = env[name];
    if (value === undefined || READ_LATER.has(name)) return true;
    const check = checks.get(name);
    return check !== undefined && check(value);
  });
}

/** This package's version (`serverInfo.version`), as the main bundle reads it. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/**
 * Starts a plain stdio `serve` early: reads the first line of `input` and answers it on `output`
 * when it is a plainly valid `initialize`.
 * @returns undefined when `argv` and `env` are not a plain stdio `serve` (nothing is read); else a
 *   promise of what the stdio transport takes over, settled once the first line is answered or
 *   found to be for the gateway (or stdin ended, or its first 1 MiB held no newline).
 */
export function startStdioEarly(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): Promise<EarlyStdioStart> | undefined {
  if (!isPlainStdioServe(argv, env)) return undefined;
  let reply: string | null = null;
  const take = (line: string) => (reply = earlyInitializeReply(line, packageVersion())) !== null;
  // As `serve` does from its start: SIGTERM or SIGINT ends the process with code 0 (nothing is open yet).
  const stop = () => process.exit(0);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return readFirstLine(io.input, DEFAULTS.bodyLimitBytes, take).then(({ taken, rest }) => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    // Not taken: the transport reads the whole input, the first line included.
    if (taken === undefined || reply === null) return { input: rest };
    io.output.write(`${reply}\n`);
    return { input: rest, answered: { line: taken, reply } };
  });
}
