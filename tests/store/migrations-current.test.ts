/**
 * Both schemas have their migrations (docs/postgresql.md#migrations): for the SQLite config
 * (`drizzle.config.ts`, `drizzle/`) and the PostgreSQL one (`drizzle.pg.config.ts`, `drizzle-pg/`),
 * `drizzle-kit check` finds the migration history consistent, and `drizzle-kit generate` into a
 * copy of the folder finds nothing to generate: a schema edited without `npm run db:generate`
 * fails here. drizzle-kit runs offline, about 2 s a call.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const drizzleKit = join(root, 'node_modules', 'drizzle-kit', 'bin.cjs');
const run = promisify(execFile);

/** Runs drizzle-kit in the repository root; stdin closed, so it can never wait on a prompt. */
async function drizzleKitOutput(args: string[]): Promise<string> {
  const child = run(process.execPath, [drizzleKit, ...args], {
    cwd: root,
    timeout: 300_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  child.child.stdin?.end();
  const { stdout, stderr } = await child;
  return stdout + stderr;
}

const CONFIGS = [
  // Each store's schema files (`schema.ts`, `release-schema.ts`), as a glob.
  { config: 'drizzle.config.ts', dialect: 'sqlite', schema: './src/store/sqlite/*schema.ts', out: 'drizzle' },
  { config: 'drizzle.pg.config.ts', dialect: 'postgresql', schema: './src/store/pg/*schema.ts', out: 'drizzle-pg' },
] as const;

describe.each(CONFIGS)('$config', ({ config, dialect, schema, out }) => {
  const scratch = mkdtempSync(join(tmpdir(), 'mb-migrations-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('passes drizzle-kit check', async () => {
    expect(await drizzleKitOutput(['check', '--config', config])).toMatch(/Everything's fine/);
  });

  it('has a migration for every change of its schema', async () => {
    const copy = join(scratch, out);
    cpSync(join(root, out), copy, { recursive: true });
    // drizzle-kit joins --out to the working directory, so it takes a relative path.
    const output = await drizzleKitOutput([
      'generate',
      '--dialect',
      dialect,
      '--schema',
      schema,
      '--out',
      relative(root, copy),
    ]);
    expect(output).toMatch(/No schema changes, nothing to migrate/);
    expect(readdirSync(copy).sort()).toEqual(readdirSync(join(root, out)).sort());
  });
});
