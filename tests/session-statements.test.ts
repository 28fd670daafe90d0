/**
 * What the polled reads cost the SQLite store (docs/performance.md "Performance"): `svc_get_session` and
 * `svc_get_messages` run statements prepared once (none is compiled again on a warm read), and a
 * session runs as many statements with 50 queued workflows as with one (the queue is one query,
 * not one more per queued workflow); read again while nothing it shows changed, it runs one
 * statement (the session cache's `PRAGMA data_version`, docs/architecture.md "The session cache").
 * Counted on the real better-sqlite3 connection of a real server; the reads are called in-process,
 * where they finish within one turn of the event loop, so no other work of the server can add to
 * the counts.
 */
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Caller } from '../src/auth/caller.js';
import { createProject, startTestServer, toolResult, waitFor, type TestServer } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let builder: ManualBuilder;
let token: string;
let caller: Caller;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  token = server.token('alice');
  const user = sqliteOf(server.app.store).prepare('select id from users where name = ?').get('alice') as { id: string };
  caller = { userId: user.id, userName: 'alice', plan: 'free', tokenId: 'test' };
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await server.close();
});

/** Statements compiled (`prepare`) and statements run (`get`, `all`, `run`, `iterate`) on a connection while `read` runs. */
async function countStatements(
  sqlite: Database.Database,
  read: () => Promise<unknown>,
): Promise<{ prepared: number; run: number }> {
  const counts = { prepared: 0, run: 0 };
  const statementProto = Object.getPrototypeOf(sqlite.prepare('select 1')) as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  const originals = (['get', 'all', 'run', 'iterate'] as const).map((name) => [name, statementProto[name]!] as const);
  for (const [name, original] of originals) {
    statementProto[name] = function (this: unknown, ...args: unknown[]) {
      counts.run++;
      return original.apply(this, args);
    };
  }
  const prepare = sqlite.prepare;
  sqlite.prepare = ((source: string) => {
    counts.prepared++;
    return prepare.call(sqlite, source);
  }) as typeof sqlite.prepare;
  try {
    await read();
  } finally {
    for (const [name, original] of originals) statementProto[name] = original;
    sqlite.prepare = prepare;
  }
  return counts;
}

const send = (projectId: string, message: string) =>
  toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message, kind: 'build' });

it('a session read prepares nothing once warm, and the queue costs one statement, not one per queued workflow', async () => {
  const sqlite = sqliteOf(server.app.store);
  const projectId = (await createProject(server.mcpUrl, token)).id;
  const first = await send(projectId, 'Build the app');
  await waitFor(() => builder.runOf(first.workflowId));
  expect((await send(projectId, 'Queued 1')).status).toBe('queued');
  const session = () => server.app.workflows.session(caller, projectId);
  // A write to the project first, so that the read is not served from the session cache.
  const uncached = async () => {
    await server.app.store.repos.projects.touch(projectId, new Date().toISOString());
    return countStatements(sqlite, session);
  };

  await session();
  const oneQueued = await uncached();
  for (let i = 2; i <= 50; i++) await send(projectId, `Queued ${i}`);
  const view = await session();
  expect(view.activeWorkflow?.id).toBe(first.workflowId);
  expect(view.queuedWorkflows).toHaveLength(50);
  const fiftyQueued = await uncached();

  expect(oneQueued.prepared).toBe(0);
  expect(fiftyQueued.prepared).toBe(0);
  expect(fiftyQueued.run).toBe(oneQueued.run);
  expect(fiftyQueued.run).toBeGreaterThan(1);
});

it('a session read again while nothing it shows changed runs one statement (PRAGMA data_version), with 50 queued workflows too', async () => {
  const sqlite = sqliteOf(server.app.store);
  const projectId = (await createProject(server.mcpUrl, token)).id;
  const first = await send(projectId, 'Build the app');
  await waitFor(() => builder.runOf(first.workflowId));
  for (let i = 1; i <= 50; i++) await send(projectId, `Queued ${i}`);
  const session = () => server.app.workflows.session(caller, projectId);
  const view = await session();
  expect(view.queuedWorkflows).toHaveLength(50);
  const again = await countStatements(sqlite, session);
  expect(again).toEqual({ prepared: 0, run: 1 });
  expect(await session()).toBe(view);
});

it('a page of the conversation prepares nothing once warm', async () => {
  const sqlite = sqliteOf(server.app.store);
  const projectId = (await createProject(server.mcpUrl, token)).id;
  await send(projectId, 'Build the app');
  const page = () => server.app.workflows.messages(caller, { projectId, limit: 100 });
  await page();
  const counts = await countStatements(sqlite, page);
  expect((await page()).messages.length).toBeGreaterThan(0);
  expect(counts.prepared).toBe(0);
  expect(counts.run).toBeGreaterThan(0);
});
