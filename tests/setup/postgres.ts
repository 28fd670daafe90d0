/**
 * Vitest global set-up: PostgreSQL for the suites that need it (docs/postgresql.md#tests).
 *
 * - `SVC_TEST_DATABASE_URL` set: that server is used (the role must be allowed to create databases).
 * - Else Debian's server binaries (`/usr/lib/postgresql/<major>/bin`, or `initdb` on `PATH`): a
 *   throwaway cluster in a temp folder, **started by the first test file that asks for a database**
 *   (`tests/setup/pg-database.ts`), so a run without PostgreSQL suites pays nothing.
 * - Neither: with `CI=true` the run fails here with what to install; elsewhere one line says the
 *   PostgreSQL suites skip.
 *
 * Either way the template database (all migrations applied once) is made on first use too, and every
 * test file gets its own copy. This file `provide`s where the server is (`svcPostgres`); teardown
 * stops the cluster and removes its folder, or drops the template from the given server.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { findPostgresBin, stopCluster } from './pg-cluster.js';
import { READY_FILE, type PostgresReady, type PostgresTestServer } from './pg-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the tests' PostgreSQL is, or null when there is none (the PostgreSQL suites skip). */
    svcPostgres: PostgresTestServer | null;
  }
}

/** Where this run's PostgreSQL comes from. */
export type PostgresSource =
  { kind: 'external'; url: string } | { kind: 'cluster'; bin: string } | { kind: 'none'; message: string };

/**
 * Decides where the run's PostgreSQL comes from: `SVC_TEST_DATABASE_URL`, else a throwaway cluster
 * of the installed server binaries, else none (the PostgreSQL suites skip, `message` says why).
 * @param env the environment (`SVC_TEST_DATABASE_URL`, `CI`)
 * @param findBin finds the server binaries (`findPostgresBin`); not called when a URL is given
 * @throws Error with `CI=true` and neither: on CI the PostgreSQL suites must run, never skip
 */
export function postgresSource(env: NodeJS.ProcessEnv, findBin: () => string | null): PostgresSource {
  const url = env.SVC_TEST_DATABASE_URL?.trim();
  if (url) return { kind: 'external', url };
  const bin = findBin();
  if (bin) return { kind: 'cluster', bin };
  const how =
    "install Debian's postgresql (apt-get install postgresql; .ci/run does it when root) or set SVC_TEST_DATABASE_URL=postgres://user@host:port/db";
  if (env.CI === 'true')
    throw new Error(
      `CI=true and no PostgreSQL for the PostgreSQL suites (no initdb under /usr/lib/postgresql/*/bin or on PATH, and SVC_TEST_DATABASE_URL is unset): ${how}.`,
    );
  return { kind: 'none', message: `[postgres] no PostgreSQL here: the PostgreSQL suites skip (${how}).` };
}

/** Finds the server, provides `svcPostgres`, and returns the teardown. @throws Error with `CI=true` and no PostgreSQL. */
export default function setup(project: TestProject): () => Promise<void> {
  const source = postgresSource(process.env, findPostgresBin);
  if (source.kind === 'none') {
    process.stderr.write(`${source.message}\n`);
    project.provide('svcPostgres', null);
    return async () => {};
  }
  sweepAbandonedRuns(source.kind === 'cluster' ? source.bin : null);
  const dir = mkdtempSync(join(tmpdir(), RUN_DIR_PREFIX));
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  // On a shared server every run needs its own template; the throwaway cluster is ours alone.
  const server: PostgresTestServer =
    source.kind === 'external'
      ? { kind: 'external', dir, url: source.url, bin: null, template: `mb_template_${randomBytes(4).toString('hex')}` }
      : { kind: 'cluster', dir, url: null, bin: source.bin, template: 'mb_template' };
  project.provide('svcPostgres', server);
  return async () => {
    try {
      if (server.bin) stopCluster(server.bin, dir);
      else await dropTemplate(dir, server.template);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** Prefix of each run's folder in the temp folder. */
const RUN_DIR_PREFIX = 'mb-pg-';
/** The file in a run's folder that names the vitest process owning it. */
const OWNER_FILE = 'owner.pid';

/**
 * Stops the clusters and removes the folders of runs whose vitest process is gone (killed before
 * its teardown), so a busy machine does not collect idle servers. Folders without an owner file
 * (a run being set up right now) are left alone.
 */
function sweepAbandonedRuns(bin: string | null): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) continue;
    try {
      if (bin) stopCluster(bin, dir);
    } catch {
      // Its server is already gone: only the folder is left.
    }
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another user's folder in a shared temp dir (EACCES): not ours to remove.
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** On a given server, drops this run's template database if a test file made it. */
async function dropTemplate(dir: string, template: string): Promise<void> {
  let ready: PostgresReady;
  try {
    ready = JSON.parse(readFileSync(join(dir, READY_FILE), 'utf8')) as PostgresReady;
  } catch {
    return;
  }
  if (!('adminUrl' in ready)) return;
  const client = new pg.Client({ connectionString: ready.adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
