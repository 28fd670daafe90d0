/**
 * PostgreSQL restarting under load (docs/operators.md, "When PostgreSQL restarts"), on a cluster of
 * this file's own (the run's shared one serves other files meanwhile): two API nodes and two
 * workers of the built bin, tool calls and sends going on through both API nodes, and builds held
 * on the workers. The server is restarted twice: `pg_ctl restart -m fast`, then a stop that lasts
 * longer than two leases before the start. Through both:
 *
 * - every process keeps running with its pid (a lost connection fails a statement, never the process);
 * - every node's `/healthz` answers 200 again within 15 s of the server being back;
 * - a call that fails during an outage answers -32603 with `data: { reason: "store_unavailable",
 *   retryable: true }` (or HTTP 503 with `Retry-After`), nothing else;
 * - every acknowledged send is stored exactly once, an unacknowledged one at most once;
 * - the held builds keep their leases (no node takes anything over) and complete once released;
 * - every queue drains without restarting anything.
 *
 * Then the server is frozen (postmaster and backends stopped with SIGSTOP): a tool call answers
 * `store_unavailable` while it is still frozen (the client-side bounds), and everything recovers
 * once it runs again.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTool, tempDir, toolResult, waitFor, type RawResponse } from '../helpers.js';
import { controlCluster, findPostgresBin, startCluster as startPostgres, stopCluster } from '../setup/pg-cluster.js';
import { startCluster, type Cluster, type NodeProcess } from './harness.js';

const PG_BIN = findPostgresBin();
/** The lease of every node (ms): the long outage lasts two of them. */
const LEASE_MS = 1500;
/** How soon every node must answer `/healthz` 200 again once the server is back (the operators' promise). */
const HEALTHY_AGAIN_MS = 15_000;
/** Senders, each with a project of its own, spread over both API nodes. */
const SENDERS = 4;
/** How long one send and its probe build may take on a busy 2-core machine (ms): budgets are counted in these. */
const BUILD_BUDGET_MS = 15_000;

/** What the load saw: the sends acknowledged and not, and every failed call's answer. */
interface LoadLog {
  acknowledged: string[];
  unacknowledged: string[];
  failures: { status: number; retryAfter: string | null; error: unknown }[];
  calls: number;
}

/** True for the answers an outage may give: -32603 `store_unavailable` in band, or 503 with `Retry-After`. */
function isOutageAnswer(res: RawResponse): boolean {
  const error = res.json?.error;
  if (res.status === 503) return res.headers.get('retry-after') !== null;
  return (
    res.status === 200 &&
    error?.code === -32603 &&
    error?.data?.reason === 'store_unavailable' &&
    error?.data?.retryable === true
  );
}

/** Every node's `/healthz` status, by node name (0 when it did not answer). */
async function healthOf(cluster: Cluster): Promise<Record<string, number>> {
  const nodes: NodeProcess[] = [...cluster.api, ...cluster.workers];
  const statuses = await Promise.all(
    nodes.map(async (node) => (await node.health().catch(() => ({ status: 0 }))).status),
  );
  return Object.fromEntries(nodes.map((node, i) => [node.name, statuses[i]!]));
}

/**
 * One sender: sends a build, polls its project until the build ended, sends the next, until `done()`;
 * a send that failed is sent again with a new instruction. Every call's failure is logged.
 */
async function sender(
  cluster: Cluster,
  token: string,
  projectId: string,
  index: number,
  done: () => boolean,
  log: LoadLog,
): Promise<void> {
  let n = 0;
  const call = async (name: string, args: unknown) => {
    const url = cluster.api[(index + n + log.calls) % cluster.api.length]!.mcpUrl;
    log.calls++;
    const res = await callTool(url, token, name, args);
    if (res.status === 200 && res.json?.result && !res.json.result.isError) return res.json.result.structuredContent;
    log.failures.push({
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      error: res.json?.error ?? res.text,
    });
    return isOutageAnswer(res) ? null : undefined;
  };
  while (!done()) {
    const instruction = `send ${index}-${++n}`;
    const sent = await call('svc_send_message', { projectId, message: instruction, kind: 'build' });
    if (!sent) {
      log.unacknowledged.push(instruction);
      // A client that is told to retry later waits a little first.
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    log.acknowledged.push(instruction);
    for (;;) {
      const session = await call('svc_get_session', { projectId });
      if (session && !session.hasActiveWorkflows) break;
      if (done()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Waits until every node's `/healthz` answers `status`; returns how long that took (ms). */
async function everyNode(cluster: Cluster, status: number, timeoutMs: number): Promise<number> {
  const start = Date.now();
  await waitFor(
    async () => Object.values(await healthOf(cluster)).every((s) => s === status),
    timeoutMs,
    `every node's /healthz to answer ${status} (now ${JSON.stringify(await healthOf(cluster))})`,
  );
  return Date.now() - start;
}

describe.skipIf(!PG_BIN)('PostgreSQL restarting under load', () => {
  const dir = tempDir('mbm-pg-restart-');
  let cluster: Cluster;

  beforeAll(async () => {
    const adminUrl = await startPostgres(PG_BIN!, dir);
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE mbm');
    await admin.end();
    const url = adminUrl.replace(/\/postgres$/, '/mbm');
    // The nodes migrate the empty database at start; the cluster goes with the folder.
    cluster = await startCluster({ db: { url, name: 'mbm', drop: async () => undefined }, leaseMs: LEASE_MS });
  }, 180_000);

  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));
  afterAll(async () => {
    await cluster?.close();
    stopCluster(PG_BIN!, dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('every process survives two restarts; no acknowledged send is lost or doubled; held builds keep their leases; every queue drains', async () => {
    const token = await cluster.token('rae');
    const nodes: NodeProcess[] = [...cluster.api, ...cluster.workers];
    const pids = nodes.map((node) => node.pid);
    // Builds in flight through both outages: one held build per worker slot pair.
    const held: string[] = [];
    for (let i = 0; i < 2; i++) {
      const project = await toolResult(cluster.api[i]!.mcpUrl, token, 'svc_create_project', { name: `Held ${i}` });
      const sent = await toolResult(cluster.api[i]!.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'hold:outage',
        kind: 'build',
      });
      await cluster.buildPid(sent.workflowId);
      held.push(sent.workflowId);
    }
    const projects = [];
    for (let i = 0; i < SENDERS; i++)
      projects.push(await toolResult(cluster.api[i % 2]!.mcpUrl, token, 'svc_create_project', { name: `Sends ${i}` }));
    const log: LoadLog = { acknowledged: [], unacknowledged: [], failures: [], calls: 0 };
    let stopLoad = false;
    const load = Promise.all(projects.map((p, i) => sender(cluster, token, p.id, i, () => stopLoad, log)));
    // The load is under way before each outage: sends acknowledged, and more in flight.
    await waitFor(() => log.acknowledged.length >= SENDERS, BUILD_BUDGET_MS * SENDERS, 'the first sends');

    // 1: a fast restart.
    await controlCluster(PG_BIN!, dir, 'restart');
    const firstBack = await everyNode(cluster, 200, HEALTHY_AGAIN_MS);
    const acknowledgedBefore = log.acknowledged.length;
    await waitFor(
      () => log.acknowledged.length >= acknowledgedBefore + SENDERS,
      BUILD_BUDGET_MS * SENDERS,
      'sends after the first restart',
    );

    // 2: down for longer than two leases (every lease held ends meanwhile), then started.
    await controlCluster(PG_BIN!, dir, 'stop');
    await everyNode(cluster, 503, HEALTHY_AGAIN_MS);
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    await controlCluster(PG_BIN!, dir, 'start');
    const secondBack = await everyNode(cluster, 200, HEALTHY_AGAIN_MS);
    const acknowledgedBetween = log.acknowledged.length;
    await waitFor(
      () => log.acknowledged.length >= acknowledgedBetween + SENDERS,
      BUILD_BUDGET_MS * SENDERS,
      'sends after the second restart',
    );
    stopLoad = true;
    await load;

    // The held builds kept their leases through both outages: released, they complete.
    cluster.release('outage');
    const workflows = log.acknowledged.length + log.unacknowledged.length + held.length;
    const drained = await waitFor(
      async () => {
        const active = await cluster.sql(
          "select id, status from workflows where status not in ('completed', 'failed', 'cancelled')",
        );
        return active.length === 0 ? true : null;
      },
      BUILD_BUDGET_MS * workflows,
      'every queue to drain',
    );
    expect(drained).toBe(true);
    const heldRows = await cluster.sql('select id, status, error_code from workflows where id = any($1) order by id', [
      held,
    ]);
    expect(heldRows).toEqual([...held].sort().map((id) => ({ id, status: 'completed', error_code: null })));

    // Every process kept its pid, and nothing crashed.
    expect(nodes.map((node) => node.running())).toEqual(nodes.map(() => true));
    expect(nodes.map((node) => node.pid)).toEqual(pids);
    for (const node of nodes) expect(node.stderr()).not.toMatch(/Unhandled 'error' event|uncaughtException/);
    // What the reapers took over: only builds that ended on their worker during an outage (a write
    // failed, so did recording the end), never a held one (they completed above).
    const takeovers = await Promise.all(
      [...cluster.api.map((n) => n.url), ...cluster.workers.map((w) => w.healthUrl)].map(async (base) =>
        Number(/^mbm_lease_takeovers_total (\d+)/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? 0),
      ),
    );
    const interrupted = await cluster.sql("select id from workflows where error_code = 'interrupted'");
    expect(interrupted.filter((row) => held.includes(row.id))).toEqual([]);

    // Acknowledged sends: stored once each; the others at most once (the commit may have beaten the outage).
    const stored = await cluster.sql<{ content: string; n: number }>(
      "select content, count(*)::int as n from messages where role = 'user' and type = 'instruction' and content like 'send %' group by content",
    );
    const count = new Map(stored.map((row) => [row.content, row.n]));
    expect(log.acknowledged.filter((m) => count.get(m) !== 1)).toEqual([]);
    expect(log.unacknowledged.filter((m) => (count.get(m) ?? 0) > 1)).toEqual([]);
    // Every failed call was an outage's answer, never a hang turned into something else.
    expect(
      log.failures.filter(
        (f) => !(f.status === 503 ? f.retryAfter !== null : (f.error as any)?.data?.reason === 'store_unavailable'),
      ),
    ).toEqual([]);
    process.stderr.write(
      `[database-restart] healthy again after ${firstBack} ms and ${secondBack} ms; ${log.calls} calls, ${log.failures.length} failed during the outages; ${log.acknowledged.length} sends acknowledged, ${log.unacknowledged.length} not; ${takeovers.reduce((a, b) => a + b, 0)} takeovers, ${interrupted.length} interrupted\n`,
    );
  }, 600_000);

  it('a frozen database (postmaster and backends stopped) fails calls fast with store_unavailable; all recover once it runs again', async () => {
    const token = await cluster.token('fay');
    const [api] = cluster.api;
    const project = await toolResult(api!.mcpUrl, token, 'svc_create_project', { name: 'Frozen' });
    const postgres = serverProcesses(dir);
    signalAll(postgres, 'SIGSTOP');
    try {
      // Answered while the database is still frozen: the call cannot have waited for the thaw.
      const started = Date.now();
      const res = await callTool(api!.mcpUrl, token, 'svc_get_project', { projectId: project.id });
      process.stderr.write(
        `[database-restart] a call to the frozen database answered ${res.status} after ${Date.now() - started} ms\n`,
      );
      expect(isOutageAnswer(res), `${res.status} ${res.text}`).toBe(true);
      const status = (await api!.health()).status;
      expect(status).toBe(503);
    } finally {
      signalAll(postgres, 'SIGCONT');
    }
    await everyNode(cluster, 200, HEALTHY_AGAIN_MS);
    expect(await toolResult(api!.mcpUrl, token, 'svc_get_project', { projectId: project.id })).toMatchObject({
      id: project.id,
    });
    for (const node of [...cluster.api, ...cluster.workers]) expect(node.running()).toBe(true);
  }, 600_000);
});

/** The pids of the cluster's server: the postmaster (first line of `postmaster.pid`) and its children (the backends). */
function serverProcesses(clusterDir: string): number[] {
  const postmaster = Number(readFileSync(join(clusterDir, 'pg', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return [postmaster, ...children];
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}
