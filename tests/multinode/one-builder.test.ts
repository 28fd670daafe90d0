/**
 * One builder per deployment (docs/operators.md "One builder per deployment"), with real processes
 * on one PostgreSQL database: a `scripted` worker beside an API node of the `command` builder says
 * so at start and never claims the API node's builds (it used to run them as simulations); the
 * build waits, shown in the session's `waitingFor` and in `/metrics`, until a worker with the
 * `command` builder starts and runs it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolResult, waitFor } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type Cluster } from './harness.js';

/** The `mbm_workflows_without_worker` series of a node's `/metrics`, by builder. */
async function withoutWorker(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const found: Record<string, number> = {};
  for (const m of text.matchAll(/^mbm_workflows_without_worker\{builder="([^"]+)"\} (\d+)$/gm))
    found[m[1]!] = Number(m[2]);
  return found;
}

describe.skipIf(!postgresAvailable())('one builder per deployment', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 1, workers: 0 });
  }, 120_000);
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it('a scripted worker beside a command API node warns, claims none of its builds, and the queue shows what it waits for', async () => {
    const api = cluster.api[0]!;
    const scripted = await cluster.startWorker({ args: ['--builder', 'scripted'] });
    const line = scripted
      .stderr()
      .split('\n')
      .find((l) => l.includes('other nodes on this store use'));
    const warning = JSON.parse(line!);
    expect(warning).toMatchObject({ level: 40, builder: 'scripted', otherBuilders: ['command'] });
    expect(warning.msg).toContain('this node\'s builder is "scripted" but other nodes on this store use "command"');

    const token = await cluster.token('mixed');
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name: 'Mixed' });
    // The API node waits its claim wait for a worker, and none with its builder takes it.
    const sent = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build it',
      kind: 'build',
    });
    expect(sent).toMatchObject({ status: 'queued', queuePosition: 1 });
    const [row] = await cluster.sql('select status, builder, runner_id from workflows where id = $1', [
      sent.workflowId,
    ]);
    expect(row).toEqual({ status: 'queued', builder: 'command', runner_id: null });
    const session = await toolResult(api.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(session.waitingFor).toBe('waiting for a worker with the command builder');
    const messages = await toolResult(api.mcpUrl, token, 'svc_get_messages', { projectId: project.id });
    expect(messages.messages.at(-1).content).toBe(
      'Build queued: waiting for a worker with the command builder; it starts when one is running.',
    );
    expect(await withoutWorker(api.url)).toEqual({ command: 1 });
    expect(await withoutWorker(scripted.healthUrl)).toEqual({ command: 1 });

    // A worker with the command builder runs it; the scripted one never ran anything.
    const worker = await cluster.startWorker();
    await waitFor(
      async () =>
        (await cluster.sql('select status from workflows where id = $1', [sent.workflowId]))[0]?.status === 'completed',
      60_000,
      'the build to complete',
    );
    const [done] = await cluster.sql('select runner_id from workflows where id = $1', [sent.workflowId]);
    expect(done.runner_id === null || done.runner_id.startsWith(`${worker.name}:`)).toBe(true);
    expect(cluster.builds().map((b) => b.node)).toEqual([worker.name]);
    expect(await withoutWorker(api.url)).toEqual({});
    const after = await toolResult(api.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(after.waitingFor).toBeUndefined();
  }, 180_000);
});
