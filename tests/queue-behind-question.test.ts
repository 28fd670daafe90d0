/**
 * A new instruction queues behind a waiting question (docs/contract.md "In short"): a send with `kind`
 * and no `questionId` starts a new workflow (queued behind the waiting one) and the question stays
 * pending; a send with `questionId` answers; a send with neither still answers.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createProject,
  httpClient,
  mcpError,
  startTestServer,
  toolResult,
  waitFor,
  type TestServer,
} from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

let server: TestServer;
let builder: ManualBuilder;
let token: string;
let client: Client;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  token = server.token('alice');
  client = await httpClient(server.mcpUrl, token);
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await client.close();
  await server.close();
});

const send = async (args: Record<string, unknown>) =>
  (await client.callTool({ name: 'svc_send_message', arguments: args })).structuredContent as any;
const session = (projectId: string) => toolResult(server.mcpUrl, token, 'svc_get_session', { projectId });

it('kind without questionId queues a new workflow; questionId, or neither, answers', async () => {
  const projectId = (await createProject(server.mcpUrl, token)).id;
  const first = await send({ projectId, message: 'Build the list', kind: 'build' });
  const run = await waitFor(() => builder.runOf(first.workflowId));
  run.ask('color', 'Which color?', { options: ['red', 'blue'] });
  const asked = await waitFor(async () => (await session(projectId)).pendingQuestion);

  // Not an answer (it would be refused: "Add a settings screen" is not one of the options).
  const queued = await send({ projectId, message: 'Add a settings screen', kind: 'build' });
  expect(queued).toMatchObject({ kind: 'build', status: 'queued', queuePosition: 1 });
  expect(queued.workflowId).not.toBe(first.workflowId);
  const deploy = await send({ projectId, message: 'Ship it', kind: 'deploy' });
  expect(deploy).toMatchObject({ kind: 'deploy', status: 'queued', queuePosition: 2 });
  let s = await session(projectId);
  expect(s.pendingQuestion.questionId).toBe(asked.questionId);
  expect(s.activeWorkflow.id).toBe(first.workflowId);
  expect(s.queuedWorkflows.map((w: any) => w.id)).toEqual([queued.workflowId, deploy.workflowId]);
  expect(run.answers).toEqual([]);

  // With questionId (and a kind too), the message is the answer.
  const answered = await send({ projectId, message: 'blue', questionId: asked.questionId, kind: 'build' });
  expect(answered).toMatchObject({ workflowId: first.workflowId, status: 'running' });
  await waitFor(() => run.answers.length === 1 && run.idle);
  expect(run.answers).toEqual(['blue']);

  // With neither, a waiting question is still answered, as before (and a bad answer is refused).
  run.ask('size', 'Which size?', { options: ['small', 'large'] });
  await waitFor(async () => (await session(projectId)).pendingQuestion?.prompt === 'Which size?');
  const refused = await mcpError(
    client.callTool({ name: 'svc_send_message', arguments: { projectId, message: 'Add a login screen' } }),
  );
  expect(refused.code).toBe(-32602);
  expect((refused.data as any).hint).toContain('pass kind');
  const plain = await send({ projectId, message: 'large' });
  expect(plain.workflowId).toBe(first.workflowId);
  await waitFor(() => run.answers.length === 2);
  expect(run.answers).toEqual(['blue', 'large']);
  s = await session(projectId);
  expect(s.queuedWorkflows).toHaveLength(2);
  run.finish();
  // The queue then runs in order.
  await waitFor(() => builder.runOf(queued.workflowId));
  builder.runOf(queued.workflowId)!.finish();
  await waitFor(() => builder.runOf(deploy.workflowId));
  builder.runOf(deploy.workflowId)!.finish();
});
