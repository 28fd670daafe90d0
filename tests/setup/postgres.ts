/**
 * Vitest global set-up: PostgreSQL for the suites that need it (docs/postgresql.md, "Tests").
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
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** Finds the server, provides `svcPostgres`, and returns the teardown. @throws Error with `CI=true` and no PostgreSQL. */
export default function setup(project: TestProject): () => Promise<void> {
  const url = process.env.SVC_TEST_DATABASE_URL?.trim();
  const bin = url ? null : findPostgresBin();
  if (!url && !bin) {
    const how = 'install Debian\'s postgresql (apt-get install postgresql; .ci/run does it when root) or set SVC_TEST_DATABASE_URL=postgres://user@host:port/db';
    if (process.env.CI === 'true') throw new Error(`CI=true and no PostgreSQL for the PostgreSQL suites (no initdb under /usr/lib/postgresql/*/bin or on PATH, SVC_TEST_DATABASE_URL unset): ${how}.`);
    process.stderr.write(`[postgres] no PostgreSQL here: the PostgreSQL suites skip (${how}).\n`);
    project.provide('svcPostgres', null);
    return async () => {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'mb-pg-'));
  // On a shared server every run needs its own template; the throwaway cluster is ours alone.
  const template = url ? `mb_template_${randomBytes(4).toString('hex')}` : 'mb_template';
  const server: PostgresTestServer = url ? { kind: 'external', dir, url, bin: null, template } : { kind: 'cluster', dir, url: null, bin, template };
  project.provide('svcPostgres', server);
  return async () => {
    try {
      if (server.kind === 'cluster' && server.bin) stopCluster(server.bin, dir);
      else await dropTemplate(dir, template);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
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
