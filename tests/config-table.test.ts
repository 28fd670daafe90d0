/**
 * The settings table (`src/config/settings.ts`) is the one source of the command line: the
 * table of docs/cli.md#command-line says the same, commander's options and `--help` come
 * from it, and a refused value keeps its message and exit code.
 */
import { readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/main.js';
import { DEFAULTS } from '../src/core/defaults.js';
import { redactedDatabaseUrl } from '../src/config/database-url.js';
import { SETTINGS, settingRows, shownDefault } from '../src/config/settings.js';
import { UsageError } from '../src/config/usage-error.js';

/** The command line's page (the README links to it): its usage block and settings table are checked here. */
const CLI_DOC = readFileSync(new URL('../docs/cli.md', import.meta.url), 'utf8');

/** The rows of the settings table of docs/cli.md: flag, environment, default, unit (`—` is empty). */
function readmeRows(): { flag: string; env: string; default: string; unit: string }[] {
  const body = CLI_DOC;
  const lines = body.split('\n').filter((line) => line.startsWith('| '));
  expect(lines[0]).toMatch(/^\| flag \| environment \| default \| unit \| commands \| meaning \|$/);
  const cell = (text: string | undefined) => {
    const value = (text ?? '').trim().replace(/^`|`$/g, '');
    return value === '—' ? '' : value;
  };
  return lines.slice(1).map((line) => {
    const cells = line.slice(1, -1).split(' | ');
    return { flag: cell(cells[0]), env: cell(cells[1]), default: cell(cells[2]), unit: cell(cells[3]) };
  });
}

/** The subcommand at `path` (`['token', 'create']`). */
function commandAt(program: Command, path: string[]): Command {
  let command = program;
  for (const name of path) command = command.commands.find((c) => c.name() === name)!;
  return command;
}

/** Parses `argv` in-process and returns what commander printed and its exit code (for a refused value: no command runs). */
async function refused(argv: string[]): Promise<{ stderr: string; exitCode: number }> {
  const program = buildProgram();
  let stderr = '';
  const quiet = (command: Command) => {
    command.exitOverride().configureOutput({ writeErr: (text) => (stderr += text), writeOut: () => undefined });
    command.commands.forEach(quiet);
  };
  quiet(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return { stderr, exitCode: error.exitCode };
    throw error;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

/** Parses `argv` in-process with no action run and returns what was thrown (a refusal before any command runs). */
async function parseError(argv: string[]): Promise<unknown> {
  const program = buildProgram();
  const quiet = (command: Command) => {
    command.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    command.action(() => undefined);
    command.commands.forEach(quiet);
  };
  quiet(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    return error;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('the settings table', () => {
  it('equals the command-line table of docs/cli.md: flag, environment variable, default and unit, in order', () => {
    const table = settingRows().map(([, s]) => ({
      flag: s.flags ?? '',
      env: s.env ?? '',
      default: shownDefault(s) ?? '',
      unit: s.unit ?? '',
    }));
    expect(readmeRows()).toEqual(table);
  });

  it("the usage lines of docs/cli.md show the table's defaults", () => {
    const usage = CLI_DOC;
    const shown = [
      ...usage.slice(0, usage.indexOf('\n```', usage.indexOf('```') + 3)).matchAll(/\[(--[a-z-]+) ([\w.-]+)\]/g),
    ];
    expect(shown.length).toBeGreaterThan(8);
    const byFlag = new Map(settingRows().map(([, s]) => [s.flags?.split(' ')[0], s]));
    for (const [, flag, value] of shown) {
      const setting = byFlag.get(flag);
      // DIR, FILE, URL: a placeholder, not a default.
      if (setting?.default === undefined || /^[A-Z]/.test(value!)) continue;
      expect(`${flag} ${value}`).toBe(`${flag} ${shownDefault(setting)}`);
    }
  });

  it("generates every command's options with their environment variable and default", () => {
    const program = buildProgram();
    for (const [, setting] of settingRows()) {
      if (!setting.flags) continue;
      for (const name of setting.commands) {
        const option = commandAt(program, name.split(' ')).options.find((o) => o.flags === setting.flags);
        expect(option, `${setting.flags} of ${name}`).toBeDefined();
        expect(option!.envVar).toBe(setting.env);
        expect(option!.defaultValue).toBe(setting.default);
        expect(option!.description).toBe(setting.help);
      }
    }
    // A command has no option the table does not declare, besides its own operands.
    const serve = commandAt(program, ['serve']);
    expect(serve.options.map((o) => o.flags)).toEqual(
      settingRows()
        .filter(([, s]) => s.flags && (s.commands as readonly string[]).includes('serve'))
        .map(([, s]) => s.flags),
    );
    expect(commandAt(program, ['token', 'create']).options.map((o) => o.flags)).toEqual([
      '--user <name>',
      '--expires-in <duration>',
      '--read-only',
      '--data-dir <dir>',
      '--database-url <url>',
    ]);
    expect(commandAt(program, ['user', 'set-plan']).options.map((o) => o.flags)).toEqual([
      '--data-dir <dir>',
      '--database-url <url>',
      '--plans <file>',
    ]);
  });

  it('--database-url is on every command that opens the store; the worker takes the builder and engine options and none of the MCP side', () => {
    const program = buildProgram();
    for (const path of [
      ['serve'],
      ['worker'],
      ['migrate'],
      ['token', 'create'],
      ['token', 'list'],
      ['token', 'revoke'],
      ['login-code'],
      ['user', 'list'],
      ['user', 'set-plan'],
    ]) {
      const option = commandAt(program, path).options.find((o) => o.long === '--database-url');
      expect(option?.envVar, path.join(' ')).toBe('SVC_DATABASE_URL');
    }
    expect(commandAt(program, ['toolchain', 'install']).options.map((o) => o.long)).not.toContain('--database-url');
    const worker = commandAt(program, ['worker']).options.map((o) => o.long);
    for (const flag of [
      '--builder',
      '--builder-config',
      '--expo-sdks',
      '--agent',
      '--agent-command',
      '--max-concurrent-workflows',
      '--lease-ms',
      '--plans',
      '--data-dir',
      '--health-port',
      '--host',
      '--drain-timeout-ms',
      '--db-pool-size',
      '--database-listen-url',
      '--no-build-sandbox',
    ]) {
      expect(worker, flag).toContain(flag);
    }
    for (const flag of [
      '--http',
      '--port',
      '--role',
      '--public-url',
      '--artifact-url',
      '--trust-proxy',
      '--body-limit',
      '--max-concurrent-requests',
      '--claim-wait-ms',
      '--browser',
    ])
      expect(worker, flag).not.toContain(flag);
    // serve takes every worker option (serve --role worker is the worker command).
    const serve = commandAt(program, ['serve']).options.map((o) => o.long);
    for (const flag of worker) expect(serve, flag).toContain(flag);
    expect(commandAt(program, ['serve']).options.find((o) => o.long === '--role')?.argChoices).toEqual([
      'all',
      'api',
      'worker',
    ]);
  });

  it("worker --help lists the worker's options from the table", () => {
    const raw = commandAt(buildProgram(), ['worker']).helpInformation({ error: false });
    const listed = raw.split('\n').flatMap((line) => /^ {2}(--[^ ]+(?: <[^>]+>)?)/.exec(line)?.[1] ?? []);
    expect(listed).toEqual(
      settingRows()
        .filter(([, s]) => s.flags && (s.commands as readonly string[]).includes('worker'))
        .map(([, s]) => s.flags),
    );
    const help = raw.replace(/\s+/g, ' ');
    expect(help).toContain('--health-port <port> port of a listener that answers only GET /healthz');
    expect(help).toContain(
      '--drain-timeout-ms <ms> worker role: on SIGTERM, how long running builds may finish before they are interrupted (default: 30000, env: SVC_DRAIN_TIMEOUT_MS)',
    );
  });

  it("--help is generated from the table: each row's flag, help, default and variable", () => {
    const help = commandAt(buildProgram(), ['serve']).helpInformation({ error: false }).replace(/\s+/g, ' ');
    for (const [, setting] of settingRows()) {
      if (!setting.flags || !(setting.commands as readonly string[]).includes('serve')) continue;
      expect(help).toContain(setting.flags);
      expect(help).toContain(setting.help.replace(/\s+/g, ' '));
      expect(help).toContain(`env: ${setting.env}`);
    }
    expect(help).toContain(
      '--body-limit <bytes> largest request body (HTTP) and largest message line (stdio) (default: 1048576, env: SVC_BODY_LIMIT)',
    );
  });

  it('a --database-url that is not PostgreSQL is refused with exit code 2, without echoing the value; an empty one means SQLite', async () => {
    for (const value of [
      'mysql://me:s3cret@db.example/app',
      'sqlite:///tmp/x.db',
      '/var/lib/s3cret.db',
      'postgres-but-not-a-url s3cret',
    ]) {
      const error = await parseError(['token', 'list', '--database-url', value]);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as Error).message).toMatch(
        /^--database-url \(SVC_DATABASE_URL\) must be a PostgreSQL URL, postgres:\/\/USER:PASSWORD@HOST:5432\/DATABASE or postgresql:\/\/…; got /,
      );
      expect((error as Error).message).not.toContain('s3cret');
    }
    expect(((await parseError(['worker', '--database-listen-url', 'http://x'])) as Error).message).toMatch(
      /^--database-listen-url \(SVC_DATABASE_LISTEN_URL\) must be a PostgreSQL URL/,
    );
    const parse = SETTINGS.databaseUrl.parse;
    expect(parse('postgres://me:pw@db:5432/app')).toBe('postgres://me:pw@db:5432/app');
    expect(parse('postgresql://db/app?sslmode=require')).toBe('postgresql://db/app?sslmode=require');
    expect(parse('')).toBeUndefined();
    expect(redactedDatabaseUrl('postgres://me:s3cret@db:5432/app?password=s3cret&sslmode=require')).toBe(
      'postgres://me:***@db:5432/app?password=***&sslmode=require',
    );
    expect(redactedDatabaseUrl('postgres://db/app')).toBe('postgres://db/app');
  });

  it("one default per setting: the values createApp and the parts fall back to are the command line's", () => {
    expect(SETTINGS.builder.default).toBe('expo');
    expect(DEFAULTS).toMatchObject({
      builder: 'expo',
      scriptedStepMs: 500,
      maxConcurrentWorkflows: 2,
      leaseMs: 2500,
      bodyLimitBytes: 1024 * 1024,
      maxConcurrentRequests: 256,
      port: 3333,
    });
    expect(SETTINGS.maxConcurrentRequests.default).toBe(DEFAULTS.maxConcurrentRequests);
    expect(SETTINGS.leaseMs.default).toBe(DEFAULTS.leaseMs);
    expect(SETTINGS.bodyLimit.default).toBe(DEFAULTS.bodyLimitBytes);
  });

  it('a refused value keeps its message and exit code 1', async () => {
    expect(await refused(['serve', '--port', '-1'])).toEqual({
      exitCode: 1,
      stderr:
        "error: option '--port <port>' argument '-1' is invalid. --port must be a whole number of at least 0\n(run with --help for usage)\n",
    });
    expect(await refused(['serve', '--lease-ms', '100'])).toEqual({
      exitCode: 1,
      stderr:
        "error: option '--lease-ms <ms>' argument '100' is invalid. --lease-ms must be a whole number of at least 200\n(run with --help for usage)\n",
    });
    expect(await refused(['serve', '--body-limit', '0'])).toEqual({
      exitCode: 1,
      stderr:
        "error: option '--body-limit <bytes>' argument '0' is invalid. --body-limit must be a whole number of at least 1\n(run with --help for usage)\n",
    });
    expect(await refused(['serve', '--max-concurrent-requests', '0'])).toEqual({
      exitCode: 1,
      stderr:
        "error: option '--max-concurrent-requests <n>' argument '0' is invalid. --max-concurrent-requests must be a whole number of at least 1\n(run with --help for usage)\n",
    });
    expect(await refused(['serve', '--expo-sdks', '58,12'])).toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining('is invalid. supported Expo SDKs: 58, 54'),
    });
    expect(await refused(['toolchain', 'install', '--sdk', '12'])).toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining("option '--sdk <list>' argument '12' is invalid. supported Expo SDKs: "),
    });
    expect(await refused(['serve', '--trust-proxy', 'not an address'])).toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining('is invalid. --trust-proxy: '),
    });
    expect(await refused(['serve', '--builder', 'gradle'])).toEqual({
      exitCode: 1,
      stderr:
        "error: option '--builder <name>' argument 'gradle' is invalid. Allowed choices are scripted, command, expo.\n(run with --help for usage)\n",
    });
  });
});
