/**
 * The session cache across processes (docs/architecture.md "The session cache"): two servers on
 * one data dir (one SQLite file) each cache the sessions they serve, and a change committed by
 * one shows in the other's very next `svc_get_session` call. The other process's commit is seen
 * through `PRAGMA data_version`, read on every call; neither server here writes in between (the
 * spawned one has the `api` role and claims nothing; the in-process one has nothing to claim),
 * so nothing else could have refreshed the cached answer. This server in-process runs the
 * builds (driven by hand); the built bin is the second process.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callTool, createProject, startTestServer, toolResult, waitFor, type TestServer } from './helpers.js';
import { spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { ManualBuilder } from './manual-builder.js';

let here: TestServer;
let there: SpawnedServer;
let builder: ManualBuilder;
let token: string;

beforeAll(async () => {
  builder = new ManualBuilder();
  here = await startTestServer({ builderInstance: builder });
  token = here.token('alice');
  there = await spawnHttpServer(here.dataDir, ['--role', 'api']);
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await there?.stop();
  await here?.close();
});

async function session(mcpUrl: string, projectId: string): Promise<any> {
  const res = await callTool(mcpUrl, token, 'svc_get_session', { projectId });
  expect(res.status).toBe(200);
  expect(JSON.parse(res.json.result.content[0].text)).toEqual(res.json.result.structuredContent);
  return res.json.result.structuredContent;
}

/** Reads the session twice on one server (the second read is served from its cache) and returns it. */
async function cached(mcpUrl: string, projectId: string): Promise<any> {
  const first = await session(mcpUrl, projectId);
  expect(await session(mcpUrl, projectId)).toEqual(first);
  return first;
}

it("a change committed by one server shows in the other's very next session read, both ways", async () => {
  const projectId = (await createProject(here.mcpUrl, token)).id;
  const first = await toolResult(here.mcpUrl, token, 'svc_send_message', {
    projectId,
    message: 'Build the app',
    kind: 'build',
  });
  expect(first.status).toBe('running');
  const second = await toolResult(here.mcpUrl, token, 'svc_send_message', {
    projectId,
    message: 'Then this',
    kind: 'build',
  });
  expect(second.status).toBe('queued');
  const run = await waitFor(() => builder.runOf(first.workflowId), 15_000, 'the run');

  // Committed in-process, read by the spawned server.
  const before = await cached(there.mcpUrl, projectId);
  expect(before.activeWorkflow).toMatchObject({ id: first.workflowId, step: { name: null } });
  const db = new Database(join(here.dataDir, 'mobile-builder.db'), { readonly: true });
  try {
    run.step('Compiling');
    await waitFor(
      () =>
        (
          db.prepare('select step_name as name from workflows where id = ?').get(first.workflowId) as {
            name: string | null;
          }
        ).name === 'Compiling' && run.idle,
      15_000,
      'the step',
    );
  } finally {
    db.close();
  }
  expect((await session(there.mcpUrl, projectId)).activeWorkflow.step).toMatchObject({ index: 1, name: 'Compiling' });

  // Committed by the spawned server, read in-process.
  expect((await cached(here.mcpUrl, projectId)).queuedWorkflows.map((w: any) => w.id)).toEqual([second.workflowId]);
  expect(
    await toolResult(there.mcpUrl, token, 'svc_cancel_workflow', { projectId, workflowId: second.workflowId }),
  ).toMatchObject({ cancelled: true });
  const after = await session(here.mcpUrl, projectId);
  expect(after.queuedWorkflows).toEqual([]);
  expect(after.activeWorkflow).toMatchObject({ id: first.workflowId, status: 'running', step: { name: 'Compiling' } });
});
