/**
 * The Expo "latest" update tokens in the store (docs/postgresql.md#update-channels), on SQLite and
 * on a real PostgreSQL: one token per project, created on first use, stable, unique, the same for
 * racing callers; resolved back to its project; and the token files of earlier versions imported
 * once at start, so a phone's URL keeps working after the upgrade.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { importUpdateChannelFiles } from '../../src/services/update-channel-import.js';
import * as pgSchema from '../../src/store/pg/schema.js';
import { SqlUpdateChannelRepo } from '../../src/store/sql/update-channel-repo.js';
import { pgDialect } from '../../src/store/pg/dialect.js';
import type { UpdateChannelRepo } from '../../src/store/repos.js';
import { openStore, type Store } from '../../src/store/store.js';
import { tempDir } from '../helpers.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../setup/pg-database.js';

const T0 = '2026-01-01T00:00:00.000Z';

/** A store's update channels, and how to add a project to it. */
interface Backend {
  channels: UpdateChannelRepo;
  addProject(id: string): Promise<void>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = tempDir('mbm-channels-');
  const store: Store = await openStore({ file: join(dir, 'store.db') });
  await store.repos.users.insert({ id: 'u1', name: 'alice', plan: 'free', createdAt: T0 });
  return {
    channels: store.repos.updateChannels,
    addProject: (id) =>
      store.repos.projects.insert({
        id,
        ownerId: 'u1',
        name: id,
        description: null,
        visibility: 'private',
        createdAt: T0,
        updatedAt: T0,
        messageSeq: 0,
        deploymentSeq: 0,
        workspaceVersion: 0,
      }),
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const db: TestDatabase = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  await pool.query('INSERT INTO users (id, name, plan, created_at) VALUES ($1, $2, $3, $4)', [
    'u1',
    'alice',
    'free',
    T0,
  ]);
  return {
    channels: new SqlUpdateChannelRepo(pgDialect(drizzle(pool, { schema: pgSchema }))),
    addProject: async (id) => {
      await pool.query(
        "INSERT INTO projects (id, owner_id, name, visibility, created_at, updated_at) VALUES ($1, 'u1', $1, 'private', $2, $2)",
        [id, T0],
      );
    },
    async close() {
      await pool.end();
      await db.drop();
    },
  };
}

const BACKENDS: [string, () => Promise<Backend>, boolean][] = [
  ['sqlite', sqliteBackend, true],
  ['postgresql', postgresBackend, postgresAvailable()],
];

describe.each(BACKENDS)('update channels on %s', (_name, open, available) => {
  let backend: Backend;
  beforeAll(async () => {
    if (available) backend = await open();
  });
  afterAll(() => backend?.close());

  it.runIf(available)(
    'a token per project: created on first use, stable, unique, resolved back to its project',
    async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await backend.addProject(a);
      await backend.addProject(b);
      expect(await backend.channels.projectOf('A'.repeat(32))).toBeNull();
      const tokenA = await backend.channels.tokenOf(a);
      expect(tokenA).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await backend.channels.tokenOf(a)).toBe(tokenA);
      const tokenB = await backend.channels.tokenOf(b);
      expect(tokenB).not.toBe(tokenA);
      expect(await backend.channels.projectOf(tokenA)).toBe(a);
      expect(await backend.channels.projectOf(tokenB)).toBe(b);
    },
  );

  it.runIf(available)('callers racing for a new project all get the one token stored', async () => {
    const id = randomUUID();
    await backend.addProject(id);
    const tokens = await Promise.all(Array.from({ length: 8 }, () => backend.channels.tokenOf(id)));
    expect(new Set(tokens).size).toBe(1);
    expect(await backend.channels.projectOf(tokens[0]!)).toBe(id);
  });

  it.runIf(available)(
    "an earlier version's token files are imported once: the same URL resolves, later starts read nothing",
    async () => {
      const dataDir = tempDir('mbm-channel-files-');
      const [kept, gone, taken] = [randomUUID(), randomUUID(), randomUUID()];
      await backend.addProject(kept);
      await backend.addProject(taken);
      const takenToken = await backend.channels.tokenOf(taken);
      const channelsDir = join(dataDir, 'expo-updates', 'channels');
      mkdirSync(channelsDir, { recursive: true });
      const file = (name: string, content: string) => writeFileSync(join(channelsDir, name), content);
      const keptToken = 'k'.repeat(31) + '1';
      file(`project-${kept}`, keptToken);
      file(`token-${keptToken}`, kept);
      // A project deleted since, and one that has a token in the store already: both skipped.
      file(`project-${gone}`, 'g'.repeat(32));
      file(`project-${taken}`, 't'.repeat(32));
      file('project-not-a-uuid', 'x'.repeat(32));

      expect(await importUpdateChannelFiles(dataDir, backend.channels, silentLogger())).toBe(1);
      expect(await backend.channels.projectOf(keptToken)).toBe(kept);
      expect(await backend.channels.tokenOf(kept)).toBe(keptToken);
      expect(await backend.channels.tokenOf(taken)).toBe(takenToken);
      expect(await backend.channels.projectOf('g'.repeat(32))).toBeNull();
      expect(existsSync(channelsDir)).toBe(false);
      expect(existsSync(`${channelsDir}.imported`)).toBe(true);
      // Once: a file written after the import is never read.
      mkdirSync(channelsDir, { recursive: true });
      rmSync(channelsDir, { recursive: true });
      expect(await importUpdateChannelFiles(dataDir, backend.channels, silentLogger())).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    },
  );
});
