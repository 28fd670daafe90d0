// A PostgreSQL server for the benches that measure the PostgreSQL store (`npm run bench`'s
// svc_get_project on PostgreSQL, bench/tool-bench.mjs). One way for every bench:
//
// - BENCH_DATABASE_URL, else SVC_TEST_DATABASE_URL: a server the bench may create databases on
//   (the URL of any database there; the role needs CREATEDB);
// - else a throwaway cluster of Debian's server binaries (`/usr/lib/postgresql/<major>/bin`, the
//   newest, else `initdb` on PATH), as the tests start one (docs/postgresql.md "Tests"): `initdb`
//   into a temp folder, started on a free loopback port with no fsync (bench data need no crash
//   safety), as the `postgres` user through `runuser` when the bench runs as root (initdb and
//   postgres refuse root); stopped and removed by `stop()`.
//
// With neither, `startPostgres` returns null with the reason, and the bench reports the PostgreSQL
// figures as not measured.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';

/** The folder of `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/<major>/bin`, else the one on PATH; null when neither. */
export function findPostgresBin() {
  const lib = '/usr/lib/postgresql';
  const majors = existsSync(lib)
    ? readdirSync(lib)
        .filter((n) => /^\d+$/.test(n))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const candidates = [
    ...majors.map((m) => join(lib, m, 'bin')),
    ...(process.env.PATH ?? '').split(delimiter).filter(Boolean),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

/** Runs one of the server's commands, as `postgres` when this process is root. @throws when it fails. */
function serverCommand(bin, command, args) {
  const asRoot = process.getuid?.() === 0;
  execFileSync(
    asRoot ? 'runuser' : join(bin, command),
    asRoot ? ['-u', 'postgres', '--', join(bin, command), ...args] : args,
    { stdio: 'pipe' },
  );
}

/** A loopback port free at the time of asking. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * CPU time (clock ticks, 100 a second) of a PostgreSQL server so far: the postmaster, its live
 * processes (the backends, the WAL writer...) and the processes of it that have ended.
 */
function serverCpuTicks(postmaster) {
  const ticks = (pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return {
        parent: Number(fields[1]),
        own: Number(fields[11]) + Number(fields[12]),
        ended: Number(fields[13]) + Number(fields[14]),
      };
    } catch {
      return undefined;
    }
  };
  const main = ticks(postmaster);
  let total = main ? main.own + main.ended : 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const child = ticks(name);
    if (child?.parent === postmaster) total += child.own;
  }
  return total;
}

/**
 * A PostgreSQL server to create the bench's databases on.
 * @returns `{ adminUrl, stop, how, cpuTicks }` (`adminUrl`: a URL whose role may create databases;
 *   `stop()` stops and removes a throwaway cluster, and does nothing for a given server; `how`:
 *   where it came from, for the report; `cpuTicks()`: the throwaway cluster's CPU so far in clock
 *   ticks, absent for a given server), or `{ skipped: reason }` when there is none.
 */
export async function startPostgres() {
  const given = process.env.BENCH_DATABASE_URL || process.env.SVC_TEST_DATABASE_URL;
  if (given) return { adminUrl: given, stop: () => {}, how: 'the given server' };
  const bin = findPostgresBin();
  if (!bin)
    return {
      skipped: 'no PostgreSQL: set BENCH_DATABASE_URL, or install the server (Debian: apt-get install postgresql)',
    };
  const dir = mkdtempSync(join(tmpdir(), 'mbm-bench-pg-'));
  const home = join(dir, 'pg');
  mkdirSync(home);
  const stop = () => {
    try {
      if (existsSync(join(home, 'data', 'postmaster.pid')))
        serverCommand(bin, 'pg_ctl', ['stop', '-m', 'fast', '-s', '-D', join(home, 'data')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    if (process.getuid?.() === 0) {
      chmodSync(dir, 0o755);
      execFileSync('chown', ['postgres:', home]);
    }
    serverCommand(bin, 'initdb', [
      '-D',
      join(home, 'data'),
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--no-locale',
      '--no-sync',
    ]);
    const port = await freePort();
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-k ${home}`,
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=200',
    ].join(' ');
    serverCommand(bin, 'pg_ctl', [
      'start',
      '-w',
      '-s',
      '-t',
      '60',
      '-D',
      join(home, 'data'),
      '-l',
      join(home, 'server.log'),
      '-o',
      options,
    ]);
    const postmaster = Number(readFileSync(join(home, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return {
      adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop,
      how: `a throwaway cluster (${bin})`,
      cpuTicks: () => serverCpuTicks(postmaster),
    };
  } catch (error) {
    stop();
    return {
      skipped: `the throwaway cluster did not start: ${
        String(error.stderr ?? error.message)
          .trim()
          .split('\n')[0]
      }`,
    };
  }
}

/**
 * Creates an empty database `name` (dropped first if it exists) on the server of `adminUrl`.
 * @returns its URL, the admin URL with the database's name.
 * @throws the driver's error when the server refuses.
 */
export async function createDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops database `name` on the server of `adminUrl`; a failure is ignored (the cluster may be gone). */
export async function dropDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } catch {
    // Nothing to clean.
  } finally {
    await client.end().catch(() => undefined);
  }
}
