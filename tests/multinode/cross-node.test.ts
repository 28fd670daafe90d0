/**
 * Two API nodes and two build workers on one PostgreSQL database (docs/operators.md "Running on several
 * machines"): the tools answer the same through either node, the project's queue keeps its rules
 * when sends arrive through both, a build's question and its cancel travel through any node, the
 * console's live stream and the token caches follow changes made elsewhere, and every build runs
 * on a worker.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isGroupAlive } from '../../src/workflows/process-groups.js';
import { rawSignIn } from '../console/console-helpers.js';
import { callTool, rawHttp, toolResult, waitFor, waitIdle } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type ApiNode, type Cluster } from './harness.js';

/** The same answer as `node` gives, with the node's own ports replaced (preview links name the node that answers). */
function portless(value: unknown, node: ApiNode): unknown {
  const port = (url: string) => new URL(url).port;
  return JSON.parse(
    JSON.stringify(value)
      .replaceAll(`:${port(node.url)}`, ':<api>')
      .replaceAll(`:${port(node.artifactsUrl)}`, ':<artifacts>'),
  );
}

describe.skipIf(!postgresAvailable())('two API nodes and two workers on one database', () => {
  let cluster: Cluster;
  let a: ApiNode;
  let b: ApiNode;

  beforeAll(async () => {
    // Nothing here kills or pauses a node: a long lease keeps a heartbeat delayed by a busy machine
    // from ever looking like a lost worker (the file checks that no lease was lost).
    cluster = await startCluster({ apiNodes: 2, workers: 2, leaseMs: 10_000 });
    [a, b] = cluster.api as [ApiNode, ApiNode];
  });
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it('the seven tools answer the same through either API node, and either serves the preview a worker built', async () => {
    const token = await cluster.token('alice');
    const [ca, cb] = [await a.client(token), await b.client(token)];
    const [toolsA, toolsB] = [await ca.listTools(), await cb.listTools()];
    expect(toolsA.tools.map((t) => t.name).sort()).toEqual([
      'svc_cancel_workflow',
      'svc_create_project',
      'svc_get_messages',
      'svc_get_project',
      'svc_get_session',
      'svc_list_projects',
      'svc_send_message',
    ]);
    expect(toolsB).toEqual(toolsA);

    const call = async (client: typeof ca, name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })).structuredContent as any;
    const project = await call(ca, 'svc_create_project', {
      name: 'Across nodes',
      description: 'built anywhere',
      visibility: 'public',
    });
    expect(await call(cb, 'svc_get_project', { projectId: project.id })).toEqual(project);
    expect(await call(cb, 'svc_list_projects')).toEqual(await call(ca, 'svc_list_projects'));
    expect((await call(ca, 'svc_list_projects')).projects).toEqual([project]);

    const sent = await call(cb, 'svc_send_message', {
      projectId: project.id,
      message: 'Build the first screen',
      kind: 'build',
    });
    expect(sent).toMatchObject({
      workflowId: expect.any(String),
      kind: 'build',
      status: expect.stringMatching(/^(running|queued)$/),
    });
    await waitIdle(a.mcpUrl, token, project.id, 60_000);

    const sessionA = await call(ca, 'svc_get_session', { projectId: project.id });
    const sessionB = await call(cb, 'svc_get_session', { projectId: project.id });
    expect(sessionA.lastWorkflow).toMatchObject({ id: sent.workflowId, status: 'completed' });
    expect(portless(sessionB, b)).toEqual(portless(sessionA, a));
    expect(await call(cb, 'svc_get_messages', { projectId: project.id })).toEqual(
      await call(ca, 'svc_get_messages', { projectId: project.id }),
    );
    const cancelA = await call(ca, 'svc_cancel_workflow', { projectId: project.id, workflowId: sent.workflowId });
    expect(cancelA).toEqual({ workflowId: sent.workflowId, status: 'completed', cancelled: false });
    expect(await call(cb, 'svc_cancel_workflow', { projectId: project.id, workflowId: sent.workflowId })).toEqual(
      cancelA,
    );

    // The same refusal through both: an unknown project.
    const unknown = { projectId: '00000000-0000-4000-8000-000000000000' };
    const [missA, missB] = [
      await callTool(a.mcpUrl, token, 'svc_get_project', unknown),
      await callTool(b.mcpUrl, token, 'svc_get_project', unknown),
    ];
    expect([missA.status, missA.json.error.code]).toEqual([404, -32004]);
    expect(missB.json.error).toEqual(missA.json.error);

    // The preview was built on a worker; each API node serves it from its own artifact origin, byte for byte.
    const [previewA, previewB] = [sessionA.previewUrls[0], sessionB.previewUrls[0]];
    expect(previewA).toMatchObject({ platform: 'web', kind: 'preview', workflowId: sent.workflowId });
    const [pageA, pageB] = [await rawHttp(previewA.url), await rawHttp(previewB.url)];
    expect([pageA.status, pageB.status]).toEqual([200, 200]);
    expect(pageA.text).toContain(sent.workflowId);
    expect(pageB.text).toBe(pageA.text);
  });

  it('sends to one project through both nodes at once: one active workflow at a time, FIFO per node, message numbers without gaps', async () => {
    const token = await cluster.token('bob');
    const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Busy' });
    // The first build holds the project, so every other send is queued behind it.
    const first = await toolResult(a.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'hold:fifo first',
      kind: 'build',
    });
    await cluster.buildPid(first.workflowId);
    const burst = (node: ApiNode, label: string) =>
      (async () => {
        const answers = [];
        for (let i = 1; i <= 5; i++)
          answers.push(
            await toolResult(node.mcpUrl, token, 'svc_send_message', {
              projectId: project.id,
              message: `${label}${i}`,
              kind: 'build',
            }),
          );
        return answers;
      })();
    const [fromA, fromB] = await Promise.all([burst(a, 'A'), burst(b, 'B')]);
    expect([...fromA, ...fromB].map((s) => s.status)).toEqual(Array(10).fill('queued'));
    // Each node's later sends queue behind its earlier ones.
    for (const answers of [fromA, fromB]) {
      const positions = answers.map((s) => s.queuePosition);
      expect(positions).toEqual([...positions].sort((x, y) => x - y));
      expect(new Set(positions).size).toBe(5);
    }
    cluster.release('fifo');
    await waitIdle(b.mcpUrl, token, project.id, 90_000);

    const rows = await cluster.sql(
      'select id, instruction, status, error_message, started_at, finished_at from workflows where project_id = $1 order by seq',
      [project.id],
    );
    expect(rows.filter((r) => r.status !== 'completed')).toEqual([]);
    expect(rows).toHaveLength(11);
    const order = rows.map((r) => r.instruction);
    expect(order.filter((i) => i.startsWith('A'))).toEqual(['A1', 'A2', 'A3', 'A4', 'A5']);
    expect(order.filter((i) => i.startsWith('B'))).toEqual(['B1', 'B2', 'B3', 'B4', 'B5']);
    expect(rows[0].id).toBe(first.workflowId);
    // Never two active: each workflow started after the one before it (in queue order) ended.
    for (let i = 1; i < rows.length; i++)
      expect(
        rows[i].started_at >= rows[i - 1].finished_at,
        `${rows[i].instruction} started before ${rows[i - 1].instruction} ended`,
      ).toBe(true);
    const messages = await cluster.sql(
      'select seq, type, content, workflow_id from messages where project_id = $1 order by seq',
      [project.id],
    );
    expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i + 1));
    // The conversation records the instructions in the queue's order.
    expect(messages.filter((m) => m.type === 'instruction').map((m) => m.workflow_id)).toEqual(rows.map((r) => r.id));
  });

  it('a question asked by a build on a worker is answered through the other API node', async () => {
    const token = await cluster.token('carol');
    const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Asks' });
    const sent = await toolResult(a.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy it, ask for the id',
      kind: 'deploy',
    });
    const asked = await waitFor(
      async () => (await toolResult(b.mcpUrl, token, 'svc_get_session', { projectId: project.id })).pendingQuestion,
      30_000,
      'the question through B',
    );
    expect(asked).toMatchObject({ workflowId: sent.workflowId, prompt: 'App identifier?' });
    const answered = await toolResult(b.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'com.example.app',
      questionId: asked.questionId,
    });
    expect(answered.workflowId).toBe(sent.workflowId);
    const idle = await waitIdle(a.mcpUrl, token, project.id, 30_000);
    expect(idle.lastWorkflow).toMatchObject({ id: sent.workflowId, status: 'completed' });
    const messages = await toolResult(a.mcpUrl, token, 'svc_get_messages', { projectId: project.id });
    expect(messages.messages.map((m: any) => m.content)).toContain('answered com.example.app');
    expect(cluster.builds().find((r) => r.workflowId === sent.workflowId)?.node).toMatch(/^worker-/);
  });

  it('a cancel through an API node stops the build process on its worker', async () => {
    const token = await cluster.token('dave');
    const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Cancelled' });
    const sent = await toolResult(a.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'hold:never',
      kind: 'build',
    });
    const pid = await cluster.buildPid(sent.workflowId);
    expect(isGroupAlive(pid)).toBe(true);
    const cancelled = await toolResult(b.mcpUrl, token, 'svc_cancel_workflow', { projectId: project.id });
    expect(cancelled).toEqual({ workflowId: sent.workflowId, status: 'cancelled', cancelled: true });
    // The call returns once the worker stopped the build: its process group is gone.
    expect(isGroupAlive(pid)).toBe(false);
    const [row] = await cluster.sql('select status, runner_id from workflows where id = $1', [sent.workflowId]);
    expect(row).toEqual({ status: 'cancelled', runner_id: null });
  });

  it("a change made through one API node reaches the other node's console stream", async () => {
    const token = await cluster.token('erin');
    const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Watched' });
    const session = await rawSignIn(b.url, token);
    const controller = new AbortController();
    try {
      const stream = await fetch(`${b.url}/projects/${project.id}/events?after=0`, {
        headers: { Cookie: session.cookie, Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('event: session')) text += decoder.decode((await reader.read()).value, { stream: true });
      // Through A; B's stream is woken by the database's notice, with nothing else happening on B.
      await toolResult(a.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'Seen from the other node',
        kind: 'build',
      });
      while (!/event: messages\ndata: .*Seen from the other node/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain('event: messages');
      expect(text).toContain('Seen from the other node');
    } finally {
      controller.abort();
    }
  });

  it('a revoked token is refused by every API node', async () => {
    const { token, id } = await cluster.createToken('frank');
    // Both nodes have verified (and cached) it.
    for (const node of cluster.api) expect((await callTool(node.mcpUrl, token, 'svc_list_projects')).status).toBe(200);
    const revoked = await cluster.cli(['token', 'revoke', id]);
    expect(revoked.status, revoked.stderr).toBe(0);
    for (const node of cluster.api) {
      const refused = await waitFor(
        async () => {
          const res = await callTool(node.mcpUrl, token, 'svc_list_projects');
          return res.status === 401 ? res : null;
        },
        15_000,
        `${node.name} to refuse the revoked token`,
      );
      expect(refused.json.error.code).toBe(-32001);
    }
  });

  it('every API node and every worker serves /metrics in the Prometheus text format, naming no user or project', async () => {
    const token = await cluster.token('hugo');
    const project = await toolResult(a.mcpUrl, token, 'svc_create_project', { name: 'Measured' });
    const scrape = async (base: string) => {
      const res = await fetch(`${base}/metrics`);
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    const fromApi = await scrape(a.url);
    expect(fromApi.status).toBe(200);
    expect(fromApi.type).toMatch(/^text\/plain/);
    expect(fromApi.text).toMatch(/^mbm_tool_calls_total\{tool="svc_create_project",code="ok"\} [1-9]/m);
    expect(fromApi.text).toMatch(/^mbm_queue_depth \d+/m);
    for (const worker of cluster.workers) {
      const fromWorker = await scrape(worker.healthUrl);
      expect(fromWorker.status).toBe(200);
      expect(fromWorker.text).toMatch(/^mbm_db_pool_total \d+/m);
    }
    for (const base of [...cluster.api.map((n) => n.url), ...cluster.workers.map((w) => w.healthUrl)]) {
      const { text } = await scrape(base);
      for (const secret of [project.id, 'hugo', token]) expect(text).not.toContain(secret);
    }
  });

  it('every build ran on a worker, none on an API node', async () => {
    const token = await cluster.token('grace');
    const projects = await Promise.all(
      [1, 2, 3].map((i) => toolResult(b.mcpUrl, token, 'svc_create_project', { name: `Spread ${i}` })),
    );
    const sends = await Promise.all(
      projects.flatMap((p) =>
        [a, b].map((node) =>
          toolResult(node.mcpUrl, token, 'svc_send_message', {
            projectId: p.id,
            message: `from ${node.name}`,
            kind: 'build',
          }),
        ),
      ),
    );
    for (const p of projects) await waitIdle(a.mcpUrl, token, p.id, 60_000);
    const builds = cluster.builds();
    for (const sent of sends)
      expect(builds.filter((r) => r.workflowId === sent.workflowId).map((r) => r.node)).toEqual([
        expect.stringMatching(/^worker-[12]$/),
      ]);
    // Every workflow of this file that started was built by the probe on a worker, and no API node built anything.
    const started = await cluster.sql('select id from workflows where started_at is not null');
    expect(started.length).toBeGreaterThanOrEqual(sends.length);
    for (const { id } of started)
      expect(
        builds.some((r) => r.workflowId === id),
        `workflow ${id} has no build record`,
      ).toBe(true);
    expect(builds.filter((r) => !r.node.startsWith('worker-'))).toEqual([]);
    // Nothing in this file kills or pauses a worker: no live worker ever lost a lease.
    expect(await cluster.sql("select instruction from workflows where error_code = 'interrupted'")).toEqual([]);
    for (const worker of cluster.workers) expect(worker.stderr()).not.toMatch(/lost the lease/);
  });
});
