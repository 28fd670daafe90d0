/**
 * The run's PostgreSQL server, made ready on first use (docs/postgresql.md#tests). The global
 * set-up (`tests/setup/postgres.ts`) only says where it will be; the first test file that asks
 * for a database (in any worker) takes the run folder's lock, starts the throwaway cluster when
 * there is one to start, creates and migrates the template database, and writes `ready.json`
 * (or the error). Every other file waits for that file: a state, not a clock.
 */
import { mkdirSync, readFileSync, renameSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { migratePostgres } from '../../src/store/pg/migrate.js';
import { startCluster } from './pg-cluster.js';

/** What the global set-up provides to the test files as `svcPostgres`. */
export interface PostgresTestServer {
  /** `cluster`: a throwaway cluster of `bin` under `dir`; `external`: the server of `SVC_TEST_DATABASE_URL`. */
  kind: 'cluster' | 'external';
  /** This run's folder: the lock, `ready.json`, and the cluster's files. */
  dir: string;
  /** `SVC_TEST_DATABASE_URL` (external only). */
  url: string | null;
  /** The folder of `initdb` and `pg_ctl` (cluster only). */
  bin: string | null;
  /** Name of the migrated template database every test database is copied from. */
  template: string;
}

/** The content of `<dir>/ready.json`: a URL that may create databases, or why there is none. */
export type PostgresReady = { adminUrl: string } | { error: string };

/** Name of the file that says the server and template are ready (or failed), in the run folder. */
export const READY_FILE = 'ready.json';

const LOCK_DIR = 'starting.lock';

/**
 * The server's admin URL once it and the template database are ready: this call makes them ready
 * when it is the run's first, else waits for the one that does.
 * @throws Error when starting the cluster, creating or migrating the template failed (the same
 *   error for every caller of the run)
 */
export async function readyServer(server: PostgresTestServer): Promise<string> {
  let ready: PostgresReady;
  if (takeLock(server.dir)) {
    ready = await prepare(server).then(
      (adminUrl) => ({ adminUrl }),
      (error: unknown) => ({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
    const file = join(server.dir, READY_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(ready));
    renameSync(`${file}.tmp`, file);
  } else {
    ready = JSON.parse(await waitForFile(server.dir, READY_FILE)) as PostgresReady;
  }
  if ('error' in ready) throw new Error(`the tests' PostgreSQL is not available: ${ready.error}`);
  return ready.adminUrl;
}

/** mkdir is atomic: exactly one caller of the run creates the lock folder. */
function takeLock(dir: string): boolean {
  try {
    mkdirSync(join(dir, LOCK_DIR));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Starts the cluster (if ours), then creates the template database and applies the migrations to it. */
async function prepare(server: PostgresTestServer): Promise<string> {
  const adminUrl =
    server.kind === 'cluster' && server.bin ? await startCluster(server.bin, server.dir) : (server.url as string);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${server.template}" TEMPLATE template0 ENCODING 'UTF8'`);
  } finally {
    await admin.end();
  }
  await migratePostgres(databaseUrl(adminUrl, server.template));
  return adminUrl;
}

/** `url` with its database name replaced by `database`. */
export function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** Resolves with the content of `<dir>/<name>` once it exists (written by rename, so whole). */
function waitForFile(dir: string, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dir, () => check());
    const check = () => {
      try {
        const text = readFileSync(join(dir, name), 'utf8');
        watcher.close();
        resolve(text);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        watcher.close();
        reject(error as Error);
      }
    };
    check();
  });
}
