/**
 * Safe retries of `svc_send_message` (docs/contract.md#tools) across two API nodes on one
 * PostgreSQL database: a repeat of a `requestId` by the same user answers what the first send
 * answered and records nothing new, through either node, also when both arrive at once; another
 * user's same `requestId` is theirs; a bad `requestId` is refused with -32602 and stores nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTool, toolResult } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type Cluster } from './harness.js';

describe.skipIf(!postgresAvailable())('sends with a requestId over two API nodes', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 2, workers: 1, leaseMs: 10_000 });
  }, 120_000);
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  /** The project's stored messages and workflows. */
  const counts = async (projectId: string) => {
    const [row] = await cluster.sql<{ messages: number; workflows: number }>(
      'select (select count(*)::int from messages where project_id = $1) as messages, (select count(*)::int from workflows where project_id = $1) as workflows',
      [projectId],
    );
    return row!;
  };

  it('a repeat through the other node answers the first answer and records nothing; racing repeats record one workflow', async () => {
    const [a, b] = cluster.api;
    const token = await cluster.token('retrier');
    const project = await toolResult(a!.mcpUrl, token, 'svc_create_project', { name: 'Retries' });
    const send = (node: typeof a, requestId: string, message: string) =>
      toolResult(node!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message, kind: 'build', requestId });
    const first = await send(a, 'req-1', 'hold:r first');
    const after = await counts(project.id);
    expect(await send(b, 'req-1', 'hold:r first')).toEqual(first);
    // Even with another message: the id names the send.
    expect(await send(a, 'req-1', 'something else')).toEqual(first);
    expect(await counts(project.id)).toEqual(after);

    // Two at once, one through each node: one workflow, one answer.
    const [x, y] = await Promise.all([send(a, 'req-2', 'second'), send(b, 'req-2', 'second')]);
    expect(y).toEqual(x);
    expect((await counts(project.id)).workflows).toBe(after.workflows + 1);
    cluster.release('r');

    // Another user's requestId is theirs alone.
    const other = await cluster.token('other-retrier');
    const theirs = await toolResult(b!.mcpUrl, other, 'svc_create_project', { name: 'Theirs' });
    const sent = await toolResult(b!.mcpUrl, other, 'svc_send_message', {
      projectId: theirs.id,
      message: 'build',
      kind: 'build',
      requestId: 'req-1',
    });
    expect(sent.workflowId).not.toBe(first.workflowId);
  }, 120_000);

  it('a requestId that is empty or longer than 100 characters is refused with -32602 and stores nothing', async () => {
    const token = await cluster.token('bad-retrier');
    const project = await toolResult(cluster.api[0]!.mcpUrl, token, 'svc_create_project', { name: 'Bad' });
    for (const requestId of ['', 'x'.repeat(101), 42]) {
      const res = await callTool(cluster.api[0]!.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build',
        kind: 'build',
        requestId,
      });
      expect(res.json.error?.code ?? res.json.result?.isError).toBe(-32602);
      expect(res.json.error.data.issues.map((i: { parameter: string }) => i.parameter)).toEqual(['requestId']);
    }
    expect(await counts(project.id)).toEqual({ messages: 0, workflows: 0 });
    const ok = await toolResult(cluster.api[0]!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
      kind: 'build',
      requestId: 'x'.repeat(100),
    });
    expect(ok.workflowId).toEqual(expect.any(String));
  }, 60_000);
});
