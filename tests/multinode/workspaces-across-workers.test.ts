/**
 * A project's workspace follows it from worker to worker (docs/operators.md "Running on several
 * machines"): after every completed workflow the worker stores a snapshot in the database, and a
 * worker whose copy is older (or missing) restores it before building. So the next build runs from
 * the last completed state on any worker, never from the half-written files of a build that was
 * killed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isGroupAlive } from '../../src/workflows/process-groups.js';
import { toolResult, waitFor, waitIdle } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type ApiNode, type Cluster } from './harness.js';

describe.skipIf(!postgresAvailable())('workspaces across workers', () => {
  let cluster: Cluster;
  let api: ApiNode;

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 1, workers: 1, leaseMs: 1500 });
    api = cluster.api[0]!;
  });
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it("the next build runs on another worker from the last completed workflow's workspace, never from a killed build's files", async () => {
    const token = await cluster.token('wes');
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name: 'Moves' });
    const send = (message: string) =>
      toolResult(api.mcpUrl, token, 'svc_send_message', { projectId: project.id, message, kind: 'build' });
    /** What the probe build of `workflowId` found in its workspace (its `saw:` line). */
    const saw = async (workflowId: string) => {
      const { messages } = await toolResult(api.mcpUrl, token, 'svc_get_messages', {
        projectId: project.id,
        limit: 500,
      });
      const line = messages.find((m: any) => m.workflowId === workflowId && m.content.includes('saw:'));
      return /saw:[ ]?(\S*)/.exec(line?.content ?? '')?.[1];
    };
    const ranOn = (workflowId: string) => cluster.builds().find((r) => r.workflowId === workflowId)?.node;

    const [first] = cluster.workers;
    const w1 = await send('w1');
    await waitIdle(api.mcpUrl, token, project.id, 60_000);
    expect([ranOn(w1.workflowId), await saw(w1.workflowId)]).toEqual([first!.name, '']);

    // The first worker drains and leaves; the second has never seen the project.
    const second = await cluster.startWorker();
    expect(await first!.stop('SIGTERM')).toBe(0);
    const w2 = await send('w2');
    await waitIdle(api.mcpUrl, token, project.id, 60_000);
    expect([ranOn(w2.workflowId), await saw(w2.workflowId)]).toEqual([second.name, 'w1,']);

    // A build that writes to the workspace and is killed with its worker leaves no trace.
    const w3 = await send('hold:killed w3');
    const pid = await cluster.buildPid(w3.workflowId);
    expect(await waitFor(() => saw(w3.workflowId), 30_000, 'the saw: line of w3')).toBe('w1,w2,');
    const third = await cluster.startWorker();
    await second.stop('SIGKILL');
    if (isGroupAlive(pid)) process.kill(-pid, 'SIGKILL');
    const w4 = await send('w4');
    const idle = await waitIdle(api.mcpUrl, token, project.id, 60_000);
    expect(idle.lastWorkflow).toMatchObject({ id: w4.workflowId, status: 'completed' });
    const [w3row] = await cluster.sql('select status, error_code from workflows where id = $1', [w3.workflowId]);
    expect(w3row).toEqual({ status: 'failed', error_code: 'interrupted' });
    expect([ranOn(w4.workflowId), await saw(w4.workflowId)]).toEqual([third.name, 'w1,w2,']);
  });
});
