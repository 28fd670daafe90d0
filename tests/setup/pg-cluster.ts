/**
 * A throwaway PostgreSQL cluster for the tests (docs/postgresql.md#tests): Debian's server
 * binaries, `initdb` into a temp folder, started on a free loopback port with `fsync=off` and its
 * unix socket inside that folder, stopped and removed at the end of the run. As root, every server
 * command runs as the `postgres` user (`runuser`), because `initdb` and `postgres` refuse root.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where Debian's `postgresql` package puts the server binaries (one folder per major version). */
const DEBIAN_PG_LIB = '/usr/lib/postgresql';

/**
 * The folder holding `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/<major>/bin`, else the
 * first `PATH` entry with both.
 * @returns null when no PostgreSQL server is installed
 */
export function findPostgresBin(): string | null {
  const candidates: string[] = [];
  if (existsSync(DEBIAN_PG_LIB)) {
    const majors = readdirSync(DEBIAN_PG_LIB)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((major) => join(DEBIAN_PG_LIB, major, 'bin')));
  }
  candidates.push(...(process.env.PATH ?? '').split(delimiter).filter(Boolean));
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

/** Runs a server command, as `postgres` when we are root. @throws Error with the command's output when it fails. */
function runServerCommand(bin: string, command: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const file = asRoot ? 'runuser' : join(bin, command);
  const argv = asRoot ? ['-u', 'postgres', '--', join(bin, command), ...args] : args;
  try {
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 300_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

/** A free TCP port on 127.0.0.1 (the kernel's choice; free when this returns). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Layout of a cluster under its run folder: `<dir>/pg` belongs to the server's user. */
function clusterPaths(dir: string) {
  const home = join(dir, 'pg');
  return { home, data: join(home, 'data'), log: join(home, 'server.log') };
}

/**
 * Creates the cluster's folder under `dir` (owned by `postgres` when root), runs `initdb` (trust
 * authentication, superuser `postgres`, UTF-8, no locale) and starts the server on a free loopback
 * port; a port taken between choosing and binding is retried twice with another.
 * @param bin the folder of `initdb` and `pg_ctl` (`findPostgresBin`)
 * @param dir an existing folder of this run (the cluster goes into `<dir>/pg`)
 * @returns the superuser's URL of the `postgres` database, `postgres://postgres@127.0.0.1:<port>/postgres`
 * @throws Error with the server's log when it does not start
 */
export async function startCluster(bin: string, dir: string): Promise<string> {
  const paths = clusterPaths(dir);
  mkdirSync(paths.home, { recursive: true });
  if (process.getuid?.() === 0) {
    // initdb refuses root, and the data folder must belong to the user that runs the server.
    chmodSync(dir, 0o755);
    execFileSync('chown', ['postgres:', paths.home]);
  }
  runServerCommand(bin, 'initdb', [
    '-D',
    paths.data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freeLoopbackPort();
    // Test data need no crash safety: no fsync, no full-page writes, commits not waiting for the WAL.
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-k ${paths.home}`,
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c synchronous_commit=off',
      '-c max_connections=300',
    ].join(' ');
    try {
      runServerCommand(bin, 'pg_ctl', [
        'start',
        '-w',
        '-s',
        '-t',
        '60',
        '-D',
        paths.data,
        '-l',
        paths.log,
        '-o',
        options,
      ]);
      return `postgres://postgres@127.0.0.1:${port}/postgres`;
    } catch (error) {
      lastError = new Error(`${(error as Error).message}\nserver log:\n${readLog(paths.log)}`, { cause: error });
    }
  }
  throw lastError ?? new Error('the PostgreSQL test cluster did not start');
}

/** Stops the cluster under `dir` at once (`pg_ctl stop -m immediate`) if its server runs. */
export function stopCluster(bin: string, dir: string): void {
  const { data } = clusterPaths(dir);
  if (!existsSync(join(data, 'postmaster.pid'))) return;
  runServerCommand(bin, 'pg_ctl', ['stop', '-m', 'immediate', '-s', '-D', data]);
}

/**
 * Runs `pg_ctl <action>` on the cluster under `dir`, waiting for it to finish (`-w`): `restart` and
 * `stop` with `-m fast` (every session is ended, open transactions roll back), `start` with the
 * options of its last start (`postmaster.opts`, which `pg_ctl restart` reuses too). For the tests
 * of database faults, on a cluster of their own.
 * @throws Error with the server's log when the command fails
 */
export async function controlCluster(bin: string, dir: string, action: 'restart' | 'stop' | 'start'): Promise<void> {
  const { data, log } = clusterPaths(dir);
  const args =
    action === 'start'
      ? ['start', '-w', '-s', '-t', '60', '-D', data, '-l', log, '-o', readStartOptions(data)]
      : [action, '-w', '-s', '-t', '60', '-m', 'fast', '-D', data, ...(action === 'restart' ? ['-l', log] : [])];
  const asRoot = process.getuid?.() === 0;
  const pgCtl = join(bin, 'pg_ctl');
  // Asynchronous: the test's own clients keep running while the server restarts.
  await new Promise<void>((resolve, reject) => {
    execFile(
      asRoot ? 'runuser' : pgCtl,
      asRoot ? ['-u', 'postgres', '--', pgCtl, ...args] : args,
      { timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(`pg_ctl ${action} failed: ${error.message}\n${stdout}${stderr}\nserver log:\n${readLog(log)}`, {
              cause: error,
            }),
          );
        else resolve();
      },
    );
  });
}

/** The `-o` options of the cluster's last start, from `postmaster.opts` (`"-p" "5433" ...` after the binary). */
function readStartOptions(data: string): string {
  const line = readFileSync(join(data, 'postmaster.opts'), 'utf8').trim();
  const words = [...line.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  // The first quoted word after the binary is `-D`'s folder: pg_ctl passes that itself.
  const options: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === '-D') i++;
    else options.push(words[i]!.includes(' ') ? `'${words[i]}'` : words[i]!);
  }
  return options.join(' ');
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '(no log)';
  }
}
