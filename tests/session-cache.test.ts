/**
 * The session cache (docs/architecture.md "The session cache") never answers stale: a polled
 * `svc_get_session` is served from the view last read while nothing it shows has changed, and
 * every kind of change this server makes shows in the very next call. Each step reads the
 * session (the cache then holds it), makes one change, waits for the change in the store's rows
 * (raw SQL, which the cache does not see), and then reads the session once. A real server on a
 * real SQLite file, over HTTP; the builder is driven by hand, so nothing moves between the steps.
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp, listenHttp } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import {
  callTool,
  createProject,
  GENEROUS_PLANS,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  type TestServer,
} from './helpers.js';
import { ManualBuilder, type ManualRun } from './manual-builder.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let builder: ManualBuilder;
let token: string;
let db: Database.Database;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  token = server.token('alice');
  db = sqliteOf(server.app.store);
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await server.close();
});

/**
 * The session over HTTP, checked to be one consistent answer: the text item is the JSON of
 * `structuredContent`, and the resource links are its preview URLs.
 */
async function session(projectId: string): Promise<any> {
  const res = await callTool(server.mcpUrl, token, 'svc_get_session', { projectId });
  expect(res.status).toBe(200);
  const { content, structuredContent } = res.json.result;
  expect(JSON.parse(content[0].text)).toEqual(structuredContent);
  expect(content.slice(1).map((c: any) => c.uri)).toEqual(structuredContent.previewUrls.map((p: any) => p.url));
  return structuredContent;
}

/** Reads the session twice (the second read is served from the cache) and returns it. */
async function cached(projectId: string): Promise<any> {
  const first = await session(projectId);
  expect(await session(projectId)).toEqual(first);
  return first;
}

const send = (projectId: string, message: string, extra: Record<string, unknown> = {}) =>
  toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message, ...extra });
const row = (workflowId: string) =>
  db.prepare('select status, step_name as stepName from workflows where id = ?').get(workflowId) as {
    status: string;
    stepName: string | null;
  };
const running = (workflowId: string) => waitFor(() => builder.runOf(workflowId), 15_000, 'the run');
/** Waits until `run` took every command pushed so far and waits for the next one. */
const settled = (run: ManualRun, check: () => boolean) =>
  waitFor(() => check() && run.idle, 15_000, 'the builder to act');

it('every change of a polled project shows in the very next svc_get_session call', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  expect((await cached(projectId)).hasActiveWorkflows).toBe(false);

  // A send that starts at once (the claim is in the send's transaction).
  const first = await send(projectId, 'Build the app', { kind: 'build' });
  expect(first.status).toBe('running');
  let view = await session(projectId);
  expect(view.activeWorkflow).toMatchObject({ id: first.workflowId, status: 'running' });
  const run = await running(first.workflowId);

  // A step.
  await cached(projectId);
  run.step('Compiling');
  await settled(run, () => row(first.workflowId).stepName === 'Compiling');
  expect((await session(projectId)).activeWorkflow.step).toMatchObject({ index: 1, name: 'Compiling' });

  // A send queued behind the running build.
  await cached(projectId);
  const second = await send(projectId, 'Second build', { kind: 'build' });
  expect(second.status).toBe('queued');
  expect((await session(projectId)).queuedWorkflows.map((w: any) => w.id)).toEqual([second.workflowId]);
  const third = await send(projectId, 'Third build', { kind: 'build' });
  expect((await session(projectId)).queuedWorkflows.map((w: any) => w.id)).toEqual([
    second.workflowId,
    third.workflowId,
  ]);

  // A question asked.
  await cached(projectId);
  run.ask('colour', 'Which colour?', { options: ['red', 'blue'] });
  await waitFor(() => row(first.workflowId).status === 'waiting_for_input', 15_000, 'the question');
  view = await session(projectId);
  expect(view.activeWorkflow.status).toBe('waiting_for_input');
  expect(view.pendingQuestion).toMatchObject({
    workflowId: first.workflowId,
    prompt: 'Which colour?',
    options: ['red', 'blue'],
  });

  // The question answered.
  await cached(projectId);
  await send(projectId, 'blue', { questionId: view.pendingQuestion.questionId });
  view = await session(projectId);
  expect(view.pendingQuestion).toBeNull();
  await settled(run, () => run.answers.length === 1 && row(first.workflowId).status === 'running');
  expect((await session(projectId)).activeWorkflow.status).toBe('running');

  // A preview published.
  await cached(projectId);
  run.publish({ kind: 'preview', platform: 'web', externalUrl: 'https://previews.example/1/' });
  await settled(run, () => run.published.length === 1);
  view = await session(projectId);
  expect(view.previewUrls.map((p: any) => p.url)).toEqual(['https://previews.example/1/']);
  expect(view.activeWorkflow.previewUrls.map((p: any) => p.url)).toEqual(['https://previews.example/1/']);

  // An older preview expiring: a project keeps its newest 10 previews per platform, so the 11th
  // published drops the first from the workflow's list.
  for (let n = 2; n <= 10; n++)
    run.publish({ kind: 'preview', platform: 'web', externalUrl: `https://previews.example/${n}/` });
  await settled(run, () => run.published.length === 10);
  expect((await cached(projectId)).activeWorkflow.previewUrls).toHaveLength(10);
  run.publish({ kind: 'preview', platform: 'web', externalUrl: 'https://previews.example/11/' });
  await settled(run, () => run.published.length === 11);
  view = await session(projectId);
  expect(view.activeWorkflow.previewUrls.map((p: any) => p.url)).toEqual(
    Array.from({ length: 10 }, (_, i) => `https://previews.example/${i + 2}/`),
  );
  expect(view.previewUrls.map((p: any) => p.url)).toEqual(['https://previews.example/11/']);

  // A queued workflow cancelled.
  await cached(projectId);
  expect(
    await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId, workflowId: third.workflowId }),
  ).toMatchObject({ cancelled: true });
  expect((await session(projectId)).queuedWorkflows.map((w: any) => w.id)).toEqual([second.workflowId]);

  // The build finishing, and the next one claimed.
  await cached(projectId);
  run.finish();
  await waitFor(() => row(first.workflowId).status === 'completed', 15_000, 'the build to complete');
  view = await session(projectId);
  expect(view.lastWorkflow).toMatchObject({ id: first.workflowId, status: 'completed' });
  const next = await running(second.workflowId);
  await waitFor(() => row(second.workflowId).status === 'running' && next.idle, 15_000, 'the claim');
  view = await session(projectId);
  expect(view.activeWorkflow).toMatchObject({ id: second.workflowId, status: 'running' });
  expect(view.queuedWorkflows).toEqual([]);

  // The running workflow cancelled.
  await cached(projectId);
  expect(await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', { projectId })).toMatchObject({
    workflowId: second.workflowId,
    cancelled: true,
  });
  view = await session(projectId);
  expect(view.activeWorkflow).toBeNull();
  expect(view.hasActiveWorkflows).toBe(false);
  expect(view.lastWorkflow).toMatchObject({ id: second.workflowId, status: 'cancelled' });
});

it('a failed build shows with its error in the very next call', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  const sent = await send(projectId, 'Build the app', { kind: 'build' });
  const run = await running(sent.workflowId);
  await cached(projectId);
  run.fail('the compiler crashed');
  await waitFor(() => row(sent.workflowId).status === 'failed', 15_000, 'the failure');
  expect((await session(projectId)).lastWorkflow).toMatchObject({
    id: sent.workflowId,
    status: 'failed',
    error: { code: 'test_failure', message: 'the compiler crashed' },
  });
});

it('a cached session is served only to readers the access rule lets in', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  await cached(projectId);
  const other = server.token('bob');
  const res = await callTool(server.mcpUrl, other, 'svc_get_session', { projectId });
  expect(res.json.error?.code).toBe(-32003);
});

it('a cached view is frozen: a caller that changes it throws instead of changing what others are served', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  const user = db.prepare('select id from users where name = ?').get('alice') as { id: string };
  const caller = { userId: user.id, userName: 'alice', plan: 'free', tokenId: 'test' };
  await server.app.workflows.session(caller, projectId);
  const view = await server.app.workflows.session(caller, projectId);
  expect(() => {
    (view as { hasActiveWorkflows: boolean }).hasActiveWorkflows = true;
  }).toThrow(TypeError);
  expect((await session(projectId)).hasActiveWorkflows).toBe(false);
});

it('a session cached before the HTTP listener bound its port is not served after: its preview links move to the bound address', async () => {
  const dataDir = tempDir();
  const manual = new ManualBuilder();
  const app = await createApp({
    dataDir,
    logger: silentLogger(),
    builderInstance: manual,
    pollIntervalMs: 50,
    plans: GENEROUS_PLANS,
  });
  let http: Awaited<ReturnType<typeof listenHttp>> | undefined;
  try {
    await app.start();
    const userId = randomUUID();
    sqliteOf(app.store)
      .prepare("insert into users (id, name, plan, created_at) values (?, 'carol', 'free', ?)")
      .run(userId, new Date().toISOString());
    const caller = { userId, userName: 'carol', plan: 'free', tokenId: 'test' };
    const projectId = (await app.projects.create(caller, { name: 'Before the bind' })).id;
    const sent = await app.workflows.send(caller, { projectId, message: 'Build the app', kind: 'build' });
    const run = await waitFor(() => manual.runOf(sent.workflowId), 15_000, 'the run');
    const site = join(dataDir, 'site');
    mkdirSync(site);
    writeFileSync(join(site, 'index.html'), '<p>hello</p>');
    run.publish({ kind: 'preview', platform: 'web', sourceDir: site });
    await waitFor(() => run.published.length === 1 && run.idle, 15_000, 'the preview');
    const before = await app.workflows.session(caller, projectId);
    expect(await app.workflows.session(caller, projectId)).toBe(before);

    http = await listenHttp(app, { host: '127.0.0.1', port: 0, serveMcp: true });
    const after = await app.workflows.session(caller, projectId);
    const base = app.publicUrl.artifactBaseOf({ projectId, platform: 'web' });
    expect(after.previewUrls[0]!.url.startsWith(base)).toBe(true);
    expect(before.previewUrls[0]!.url.startsWith(base)).toBe(false);
    expect(after.activeWorkflow!.previewUrls[0]!.url).toBe(after.previewUrls[0]!.url);
    run.finish();
    await waitFor(() => run.ended, 15_000, 'the build to end');
  } finally {
    for (const live of manual.live()) live.fail();
    await http?.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
