/**
 * Nodes that die, stall or lose their database connection (docs/operators.md "Running on several
 * machines", docs/workflows.md "Leases"): a SIGKILLed worker's build is failed as `interrupted`
 * by another node and the project's queue moves on to the other worker; a worker paused past its
 * lease writes nothing once it wakes and its build is killed; an API node SIGKILLed in the middle
 * of a burst of sends loses none it acknowledged; a node whose LISTEN connection is terminated
 * reconnects, clears its caches and loses no cancel.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { isGroupAlive } from '../../src/workflows/process-groups.js';
import { callTool, toolResult, waitFor, waitIdle } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type ApiNode, type Cluster, type NodeProcess, type WorkerNode } from './harness.js';

/** The worker the probe says ran `workflowId`. */
function builderOf(cluster: Cluster, workflowId: string): WorkerNode {
  const name = cluster.builds().find((r) => r.workflowId === workflowId)?.node;
  const worker = cluster.workers.find((w) => w.name === name);
  if (!worker) throw new Error(`no worker ran ${workflowId} (probe: ${name})`);
  return worker;
}

/** The workflows and the conversation of a project, as stored. */
async function stored(cluster: Cluster, projectId: string) {
  return {
    workflows: await cluster.sql(
      'select id, status, error_code, step_index, runner_id, lease_expires_at, finished_at from workflows where project_id = $1 order by seq',
      [projectId],
    ),
    messages: await cluster.sql(
      'select seq, role, type, content, workflow_id from messages where project_id = $1 order by seq',
      [projectId],
    ),
  };
}

/**
 * The backend pid of `node`'s LISTEN connection: its application name is the node's
 * (`mobile-builder-mcp/<role>/<runner id>`, so it holds `<node name>:`) with `/listen` after it,
 * and the last statement it ran is its `LISTEN`.
 */
async function listenerOf(cluster: Cluster, node: NodeProcess): Promise<number> {
  return waitFor(
    async () => {
      const rows = await cluster.sql(
        "select pid from pg_stat_activity where datname = current_database() and application_name like $1 and (application_name like '%/listen' or query ilike 'listen%')",
        [`%/${node.name}:%`],
      );
      return rows.length === 1 ? (rows[0].pid as number) : null;
    },
    15_000,
    `${node.name}'s LISTEN connection`,
  );
}

describe.skipIf(!postgresAvailable())('nodes that fail', () => {
  let cluster: Cluster;
  let api: ApiNode;

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 1, workers: 2, leaseMs: 1500 });
    api = cluster.api[0]!;
  });
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it('a worker SIGKILLed mid-build: one interrupted message, no gap in message numbers, the queue moves on to the other worker', async () => {
    const token = await cluster.token('kim');
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name: 'Killed' });
    const first = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'hold:killed',
      kind: 'build',
    });
    const pid = await cluster.buildPid(first.workflowId);
    const second = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'after the kill',
      kind: 'build',
    });
    expect(second.status).toBe('queued');
    const victim = builderOf(cluster, first.workflowId);
    const before = (await stored(cluster, project.id)).messages;
    await victim.stop('SIGKILL');
    cluster.workers.splice(cluster.workers.indexOf(victim), 1);
    onTestFinished(async () => {
      // The dead worker's orphaned build: only a node of its own runner host would kill its group.
      if (isGroupAlive(pid)) process.kill(-pid, 'SIGKILL');
      await cluster.startWorker();
    });

    const idle = await waitIdle(api.mcpUrl, token, project.id, 60_000);
    expect(idle.lastWorkflow).toMatchObject({ id: second.workflowId, status: 'completed' });
    const after = await stored(cluster, project.id);
    expect(after.workflows[0]).toMatchObject({
      id: first.workflowId,
      status: 'failed',
      error_code: 'interrupted',
      runner_id: null,
    });
    expect(after.messages.slice(0, before.length)).toEqual(before);
    expect(after.messages.map((m) => m.seq)).toEqual(after.messages.map((_, i) => i + 1));
    expect(
      after.messages.filter((m) => m.workflow_id === first.workflowId && /interrupted/.test(m.content)),
    ).toHaveLength(1);
    expect(builderOf(cluster, second.workflowId).name).not.toBe(victim.name);
    // One node's reaper took it over, and counts it.
    const takeovers = await Promise.all(
      [...cluster.api.map((n) => n.url), ...cluster.workers.map((w) => w.healthUrl)].map(async (base) => {
        const text = await (await fetch(`${base}/metrics`)).text();
        return Number(/^mbm_lease_takeovers_total (\d+)/m.exec(text)?.[1] ?? 0);
      }),
    );
    expect(takeovers.reduce((x, y) => x + y, 0)).toBe(1);
  });

  it('a worker paused past its lease writes nothing once it wakes, and its build is killed', async () => {
    const token = await cluster.token('lee');
    const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name: 'Paused' });
    const sent = await toolResult(api.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'hold:paused',
      kind: 'build',
    });
    const pid = await cluster.buildPid(sent.workflowId);
    const sleeper = builderOf(cluster, sent.workflowId);
    cluster.workers.splice(cluster.workers.indexOf(sleeper), 1);
    onTestFinished(() => cluster.startWorker().then(() => undefined));
    sleeper.child.kill('SIGSTOP'); // the node process only: its build runs on in its own group
    let paused = true;
    try {
      const taken = await waitFor(
        async () => {
          const s = await stored(cluster, project.id);
          return s.workflows[0].status === 'failed' ? s : null;
        },
        30_000,
        "another node to fail the paused worker's workflow",
      );
      expect(taken.workflows[0]).toMatchObject({ error_code: 'interrupted', runner_id: null });
      expect(isGroupAlive(pid)).toBe(true); // its worker is frozen, so the build runs on
      sleeper.child.kill('SIGCONT');
      paused = false;
      // Awake, the worker finds it lost the lease: it says so and kills its build's process group.
      await waitFor(
        () => /lost the lease|lost its lease/.test(sleeper.stderr()),
        30_000,
        'the woken worker to notice its lost lease',
      );
      await waitFor(() => !isGroupAlive(pid), 30_000, 'the woken worker to kill its build');
      expect(await sleeper.stop('SIGTERM')).toBe(0);
      expect(await stored(cluster, project.id)).toEqual(taken);
    } finally {
      if (paused) sleeper.child.kill('SIGCONT');
    }
  });

  it('an API node SIGKILLed mid-burst loses no send it acknowledged', async () => {
    const token = await cluster.token('max');
    const doomed = await cluster.startApi();
    const projects = await Promise.all(
      [1, 2].map((i) => toolResult(api.mcpUrl, token, 'svc_create_project', { name: `Burst ${i}` })),
    );
    const acknowledged: { workflowId: string; messageId: string; message: string }[] = [];
    let killed = false;
    const chain = async (c: number) => {
      for (let i = 0; i < 40 && !killed; i++) {
        const message = `burst ${c}-${i}`;
        const res = await callTool(doomed.mcpUrl, token, 'svc_send_message', {
          projectId: projects[c % 2]!.id,
          message,
          kind: 'build',
        }).catch(() => null);
        if (res?.status !== 200) return;
        acknowledged.push({ ...res.json.result.structuredContent, message });
      }
    };
    const chains = Promise.all([0, 1, 2, 3].map(chain));
    await waitFor(() => acknowledged.length >= 8, 30_000, 'a few acknowledged sends');
    await doomed.stop('SIGKILL');
    killed = true;
    await chains;
    cluster.api.splice(cluster.api.indexOf(doomed), 1);

    for (const p of projects) await waitIdle(api.mcpUrl, token, p.id, 120_000);
    const messages = await cluster.sql(
      "select id, content, workflow_id from messages where type = 'instruction' and project_id = any($1)",
      [projects.map((p) => p.id)],
    );
    for (const ack of acknowledged)
      expect(messages).toContainEqual({ id: ack.messageId, content: ack.message, workflow_id: ack.workflowId });
    // Every stored send ran to its end: nothing stays queued behind the dead node.
    const states = await cluster.sql('select status from workflows where project_id = any($1)', [
      projects.map((p) => p.id),
    ]);
    expect(new Set(states.map((s) => s.status))).toEqual(new Set(['completed']));
  });

  it('a node whose LISTEN connection is terminated reconnects: its caches clear, and no cancel is lost', async () => {
    const { token, id } = await cluster.createToken('ned');
    expect((await callTool(api.mcpUrl, token, 'svc_list_projects')).status).toBe(200); // cached on the node
    const listener = await listenerOf(cluster, api);

    // While the node cannot reconnect, the token is revoked behind its back (no notice reaches it).
    const admin = new URL(cluster.db.url);
    admin.pathname = '/postgres';
    const adminClient = new pg.Client({ connectionString: admin.toString() });
    const direct = new pg.Client({ connectionString: cluster.db.url });
    await Promise.all([adminClient.connect(), direct.connect()]);
    try {
      await adminClient.query(`alter database "${cluster.db.name}" allow_connections false`);
      try {
        await direct.query('select pg_terminate_backend($1)', [listener]);
        await direct.query('update api_tokens set revoked_at = $2 where id = $1', [id, new Date().toISOString()]);
      } finally {
        await adminClient.query(`alter database "${cluster.db.name}" allow_connections true`);
      }
    } finally {
      await Promise.all([adminClient.end(), direct.end()]);
    }
    const again = await listenerOf(cluster, api);
    expect(again).not.toBe(listener);
    await waitFor(
      async () => (await callTool(api.mcpUrl, token, 'svc_list_projects')).status === 401,
      15_000,
      'the node to refuse the revoked token after its reconnect',
    );

    // A worker's listener dies just before a cancel of its build is published.
    const owner = await cluster.token('olga');
    const project = await toolResult(api.mcpUrl, owner, 'svc_create_project', { name: 'Cancel across a reconnect' });
    const sent = await toolResult(api.mcpUrl, owner, 'svc_send_message', {
      projectId: project.id,
      message: 'hold:reconnect',
      kind: 'build',
    });
    const pid = await cluster.buildPid(sent.workflowId);
    const worker = builderOf(cluster, sent.workflowId);
    const workerListener = await listenerOf(cluster, worker);
    await cluster.sql('select pg_terminate_backend($1)', [workerListener]);
    const cancelled = await toolResult(api.mcpUrl, owner, 'svc_cancel_workflow', { projectId: project.id });
    expect(cancelled).toEqual({ workflowId: sent.workflowId, status: 'cancelled', cancelled: true });
    expect(isGroupAlive(pid)).toBe(false);
    expect(await listenerOf(cluster, worker)).not.toBe(workerListener);
  });

  it('a worker whose database is unreachable says 503 on /healthz, then 200 once it is back', async () => {
    const worker = cluster.workers[0]!;
    expect((await worker.health()).status).toBe(200);
    const admin = new URL(cluster.db.url);
    admin.pathname = '/postgres';
    const adminClient = new pg.Client({ connectionString: admin.toString() });
    await adminClient.connect();
    try {
      await adminClient.query(`alter database "${cluster.db.name}" allow_connections false`);
      try {
        // Every connection of the worker ends, and no new one may open: the database is "down" for it.
        await adminClient.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name like $2',
          [cluster.db.name, `%/${worker.name}:%`],
        );
        const down = await waitFor(
          async () => {
            const h = await worker.health();
            return h.status === 503 ? h : null;
          },
          30_000,
          'the worker to report 503',
        );
        expect(JSON.stringify(down.body)).toMatch(/store|database|events|listen/i);
      } finally {
        await adminClient.query(`alter database "${cluster.db.name}" allow_connections true`);
      }
    } finally {
      await adminClient.end();
    }
    await waitFor(async () => (await worker.health()).status === 200, 30_000, 'the worker to report 200 again');
  });
});
