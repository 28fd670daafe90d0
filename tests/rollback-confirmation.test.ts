/**
 * A rollback is confirmed by the person first when the client can ask (docs/releases.md
 * "Confirmation"), over HTTP with the SDK v2 client of the 2026-07-28 era against the real server:
 * declined, nothing is rolled back and the workflow ends `cancelled`; confirmed, the rollback runs
 * and the channel serves the deploy again. A client without the capability is not asked. A number
 * the project does not have is refused before the person is asked.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, waitFor, type TestServer } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

const MODERN = '2026-07-28';
type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' } | { action: 'cancel' };

let server: TestServer;
let builder: ManualBuilder;
let asker: ClientV2;
let plain: ClientV2;
const asked: Array<{ message: string; requestedSchema: any }> = [];
const answers: Answer[] = [];

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  const auth = { headers: { authorization: `Bearer ${server.token('alice')}` } };
  const url = new URL(server.mcpUrl);
  asker = new ClientV2(
    { name: 'asker', version: '1' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } },
  );
  asker.setRequestHandler('elicitation/create', (request) => {
    asked.push(request.params as { message: string; requestedSchema: any });
    return answers.shift() ?? { action: 'cancel' };
  });
  await asker.connect(new HttpTransportV2(url, { requestInit: auth }));
  plain = new ClientV2({ name: 'plain', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await plain.connect(new HttpTransportV2(url, { requestInit: auth }));
});

afterAll(async () => {
  for (const client of [asker, plain]) await client?.close();
  await server?.close();
});

async function call(client: ClientV2, name: string, args: Record<string, unknown>): Promise<any> {
  return ((await client.callTool({ name, arguments: args })) as { structuredContent?: unknown }).structuredContent;
}

/** A project with two deploys (#1, #2) published through the manual builder, as external URLs. */
async function twoDeploys(): Promise<string> {
  const project = await call(plain, 'svc_create_project', { name: 'Rollbacks' });
  for (const n of [1, 2]) {
    const sent = await call(plain, 'svc_send_message', { projectId: project.id, message: `v${n}`, kind: 'deploy' });
    const run = await waitFor(() => builder.runOf(sent.workflowId));
    run.publish({ kind: 'deployment', platform: 'web', externalUrl: `https://example.com/v${n}` });
    run.finish();
    await idle(project.id);
  }
  return project.id;
}

async function idle(projectId: string): Promise<any> {
  return waitFor(async () => {
    const session = await call(plain, 'svc_get_session', { projectId });
    return session.hasActiveWorkflows ? null : session;
  });
}

describe('rollback confirmation', () => {
  it('declined: nothing is rolled back and the workflow ends cancelled', async () => {
    const projectId = await twoDeploys();
    answers.push({ action: 'decline' });
    const sent = await call(asker, 'svc_send_message', { projectId, message: '#1', kind: 'rollback' });
    expect(asked.at(-1)!.message).toContain('Roll back to deploy #1?');
    expect(sent).toMatchObject({ kind: 'rollback', status: 'cancelled' });
    const session = await idle(projectId);
    expect(session.lastWorkflow).toMatchObject({ id: sent.workflowId, kind: 'rollback', status: 'cancelled' });
    expect(session.deployments.map((d: any) => [d.number, d.state])).toEqual([
      [2, 'serving'],
      [1, 'superseded'],
    ]);
    // A form accepted without the confirming answer is no confirmation either.
    answers.push({ action: 'accept', content: { confirm: 'Keep the current deploy' } });
    const kept = await call(asker, 'svc_send_message', { projectId, message: '1', kind: 'rollback' });
    expect(kept.status).toBe('cancelled');
  });

  it('confirmed: the rollback runs; a client without the capability is not asked', async () => {
    const projectId = await twoDeploys();
    answers.push({ action: 'accept', content: { confirm: 'Roll back' } });
    const sent = await call(asker, 'svc_send_message', { projectId, message: '1', kind: 'rollback' });
    expect(sent.kind).toBe('rollback');
    expect(['queued', 'running']).toContain(sent.status);
    let session = await idle(projectId);
    expect(session.lastWorkflow).toMatchObject({ id: sent.workflowId, status: 'completed' });
    expect(session.deployments[0]).toMatchObject({ number: 3, rollbackOf: 1, state: 'serving', platforms: ['web'] });
    expect(session.lastWorkflow.previewUrls).toEqual([
      expect.objectContaining({ url: 'https://example.com/v1', kind: 'deployment', deployNumber: 3 }),
    ]);

    const before = asked.length;
    const direct = await call(plain, 'svc_send_message', { projectId, message: '#2', kind: 'rollback' });
    session = await idle(projectId);
    expect(asked).toHaveLength(before);
    expect(session.lastWorkflow).toMatchObject({ id: direct.workflowId, status: 'completed' });
    expect(session.deployments.map((d: any) => [d.number, d.state])).toEqual([
      [4, 'serving'],
      [3, 'rolled_back'],
      // Rolled back by #3 once: its history says so, though #4 serves its bundles again.
      [2, 'rolled_back'],
      [1, 'superseded'],
    ]);
  });

  it('an unknown number is refused before the person is asked', async () => {
    const projectId = await twoDeploys();
    const before = asked.length;
    const refused = await asker
      .callTool({ name: 'svc_send_message', arguments: { projectId, message: '#7', kind: 'rollback' } })
      .then(
        () => null,
        (error: { code?: number; data?: unknown }) => ({ code: error.code, data: error.data }),
      );
    expect(refused).toMatchObject({ code: -32602, data: { numbers: [1, 2] } });
    expect(asked).toHaveLength(before);
  });
});
