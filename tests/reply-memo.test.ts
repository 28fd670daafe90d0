/**
 * The reply memo at the gateway (docs/architecture.md "The reply memo"): a repeated read-only call
 * is answered with the bytes of the first answer and the new request id; a write made by this node
 * or another one (a message sent, a workflow cancelled, a project created) shows on the very next
 * call; a revoked token is refused on its next call though its reply was kept; the rate limit
 * counts every call, answered from the memo or not; and one caller's kept reply never reaches
 * another. Two nodes share one store: SQLite (one file, the nodes as two connections, as two
 * processes on one host are) and PostgreSQL when the run has it, where the memo keeps only
 * `svc_get_project` (one project row, valid while the project cache's generation stays put: a
 * change through this node shows at once, one through another node once its notice arrives, as in
 * that cache) and every other call reads. Real apps over HTTP, raw JSON-RPC bodies, so that the
 * bytes are compared as sent.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, listenHttp, type App, type AppConfig } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import type { RunningHttpServer } from '../src/transports/http-server.js';
import { GENEROUS_PLANS, post, tempDir, waitFor } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

/** A plan whose tool-call rate a test reaches. */
const TIGHT = 'tight';
const TIGHT_RATE = 5;
const PLANS = { ...GENEROUS_PLANS, [TIGHT]: { ...GENEROUS_PLANS.free, requestsPerMinute: TIGHT_RATE } };

/** One node: a whole service with its HTTP side. */
interface Node {
  app: App;
  http: RunningHttpServer;
  builder: ManualBuilder;
  mcpUrl: string;
}

/** This file's PostgreSQL database, made on first use. */
let pgDatabase: Promise<TestDatabase> | undefined;
const nodes: Node[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const node of nodes.reverse()) {
    for (const run of node.builder.live()) run.fail('test over');
    await node.http.close();
    await node.app.close();
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await (await pgDatabase)?.drop();
});

/**
 * `memo`: every memoizable call is kept (else only `svc_get_project`); `exact`: another node's
 * commit shows on the next call (else once its notice arrived).
 */
const STORES: {
  name: string;
  memo: boolean;
  exact: boolean;
  config(shared: string): Promise<Partial<AppConfig>>;
}[] = [
  {
    name: 'sqlite',
    memo: true,
    exact: true,
    config: async (shared) => ({ databaseFile: join(shared, 'mobile-builder.db') }),
  },
  ...(postgresAvailable()
    ? [
        {
          name: 'postgres',
          memo: false,
          exact: false,
          config: async () => ({ databaseUrl: (await (pgDatabase ??= createTestDatabase())).url }),
        },
      ]
    : []),
];

/** Starts a node on `store` as runner host `host` (each node its own, as on two machines). */
async function startNode(store: Partial<AppConfig>, host: string): Promise<Node> {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const builder = new ManualBuilder();
  const before = process.env.SVC_RUNNER_HOST;
  process.env.SVC_RUNNER_HOST = host;
  let app: App;
  try {
    app = await createApp({
      dataDir,
      logger: silentLogger(),
      builderInstance: builder,
      pollIntervalMs: 50,
      // Nothing here stops a node: a long lease keeps a busy machine's late heartbeat from losing a run.
      leaseMs: 30_000,
      plans: PLANS,
      ...store,
    });
  } finally {
    if (before === undefined) delete process.env.SVC_RUNNER_HOST;
    else process.env.SVC_RUNNER_HOST = before;
  }
  await app.start();
  const http = await listenHttp(app, { host: '127.0.0.1', port: 0, serveMcp: true });
  const node = { app, http, builder, mcpUrl: `${http.url}/mcp` };
  nodes.push(node);
  return node;
}

let nextId = 1;
/** The raw reply to one `tools/call` with request id `id`. */
function call(node: Node, token: string, name: string, args: Record<string, unknown>, id: string | number = nextId++) {
  return post(node.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, token);
}

/** The structured result of a call that must succeed. */
async function result(node: Node, token: string, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await call(node, token, name, args);
  expect(res.status, res.text).toBe(200);
  expect(res.json.error, res.text).toBeUndefined();
  return res.json.result.structuredContent;
}

/** The memo's hits so far on `node`. */
const hits = (node: Node) => node.app.gateway.memoStats()?.hits ?? 0;

describe.each(STORES)('the reply memo on $name', (store) => {
  let a: Node;
  let b: Node;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };

  it('starts two nodes on one store', async () => {
    const shared = tempDir();
    dirs.push(shared);
    mkdirSync(shared, { recursive: true });
    a = await startNode(await store.config(shared), `memo-a-${store.name}`);
    // The second node builds nothing (role api): every run is node a's.
    b = await startNode({ ...(await store.config(shared)), role: 'api' }, `memo-b-${store.name}`);
    const issue = async (user: string) => {
      const { token, summary } = await a.app.tokens.create(`${user}-${store.name}`);
      return { token, id: summary.id };
    };
    alice = await issue('alice');
    bob = await issue('bob');
  });

  it('answers a repeated read with the bytes of the first answer and the new request id', async () => {
    const project = await result(a, alice.token, 'svc_create_project', { name: 'Kept' });
    const args = { projectId: project.id };
    const first = await call(a, alice.token, 'svc_get_project', args, 7001);
    const before = hits(a);
    const again = await call(a, alice.token, 'svc_get_project', args, 'second-call');
    const third = await call(a, alice.token, 'svc_get_project', { ...args }, 7003);
    expect(first.status).toBe(200);
    expect(again.text).toBe(first.text.replace('"id":7001', '"id":"second-call"'));
    expect(third.text).toBe(first.text.replace('"id":7001', '"id":7003'));
    expect(again.json.id).toBe('second-call');
    expect(hits(a)).toBe(before + 2);
    // Arguments are canonical: the same call with its keys in another order is the same entry.
    const session = { projectId: project.id, waitSeconds: 0, screenshot: false };
    const s1 = await call(a, alice.token, 'svc_get_session', session, 1);
    const s2 = await call(a, alice.token, 'svc_get_session', { screenshot: false, waitSeconds: 0, ...args }, 2);
    expect(s2.text).toBe(s1.text.replace('"id":1', '"id":2'));
    // PostgreSQL keeps no session: both were read.
    expect(hits(a)).toBe(before + 2 + (store.memo ? 1 : 0));
  });

  it('a project created through either node shows in the very next list', async () => {
    for (const writer of [a, b]) {
      const listed = await result(a, alice.token, 'svc_list_projects', {});
      expect(await result(a, alice.token, 'svc_list_projects', {})).toEqual(listed);
      const made = await result(writer, alice.token, 'svc_create_project', {
        name: `From ${writer === a ? 'a' : 'b'}`,
      });
      const after = await result(a, alice.token, 'svc_list_projects', {});
      expect(after.projects.map((p: { id: string }) => p.id)).toContain(made.id);
      expect(after.projects).toHaveLength(listed.projects.length + 1);
    }
  });

  it('a message sent or a workflow cancelled through either node shows in the very next session read', async () => {
    for (const writer of [a, b]) {
      const { id: projectId } = await result(a, alice.token, 'svc_create_project', { name: 'Sessions' });
      const read = () => result(a, alice.token, 'svc_get_session', { projectId });
      const idle = await read();
      expect(await read()).toEqual(idle);
      expect(idle.hasActiveWorkflows).toBe(false);
      const first = await result(writer, alice.token, 'svc_send_message', {
        projectId,
        message: 'Build it',
        kind: 'build',
      });
      const sent = await read();
      expect(sent.hasActiveWorkflows).toBe(true);
      expect(JSON.stringify(sent)).toContain(first.workflowId);
      const second = await result(writer, alice.token, 'svc_send_message', {
        projectId,
        message: 'Then this',
        kind: 'build',
      });
      expect(second.status).toBe('queued');
      const queued = await read();
      expect(queued.queuedWorkflows.map((w: { id: string }) => w.id)).toContain(second.workflowId);
      // Read again (kept on SQLite, if nothing moved), then cancelled.
      await read();
      const cancelled = await result(writer, alice.token, 'svc_cancel_workflow', {
        projectId,
        workflowId: second.workflowId,
      });
      expect(cancelled.status).toBe('cancelled');
      const after = await read();
      expect(after.queuedWorkflows.map((w: { id: string }) => w.id)).not.toContain(second.workflowId);
    }
  });

  it('a revoked token is refused on its very next call, though its reply was kept (revoked here or on the other node)', async () => {
    for (const revoker of [a, b]) {
      const { token, summary } = await a.app.tokens.create(`carol-${store.name}`);
      const { id: projectId } = await result(a, token, 'svc_create_project', { name: 'Revoked' });
      const kept = await call(a, token, 'svc_get_project', { projectId });
      const before = hits(a);
      expect((await call(a, token, 'svc_get_project', { projectId })).json.result).toEqual(kept.json.result);
      expect(hits(a)).toBe(before + 1);
      expect(await revoker.app.tokens.revoke(summary.id)).toBe(true);
      // PostgreSQL: another node's token cache hears of the revocation through its notice
      // (docs/workflows.md "Change notices"), so a revocation made there is waited for; on SQLite it is exact.
      if (!store.exact && revoker !== a)
        await waitFor(async () => (await call(a, token, 'svc_get_project', { projectId })).status === 401 || undefined);
      const refused = await call(a, token, 'svc_get_project', { projectId });
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe(-32001);
      expect(refused.json.result).toBeUndefined();
    }
  });

  it('a project row changed by a node shows in the next read: at once on that node, on the other once it is told', async () => {
    const { token } = await a.app.tokens.create(`erin-${store.name}`);
    const { id: projectId } = await result(a, token, 'svc_create_project', { name: 'Touched' });
    const read = (node: Node) => result(node, token, 'svc_get_project', { projectId });
    const first = await read(a);
    expect(await read(b)).toEqual(first);
    const before = [hits(a), hits(b)];
    expect(await read(a)).toEqual(first);
    expect(await read(b)).toEqual(first);
    // Kept on both nodes. (On SQLite any commit of the other node, a heartbeat too, moves the
    // generation: the first test counts its hits.)
    if (!store.exact) expect([hits(a), hits(b)]).toEqual([before[0]! + 1, before[1]! + 1]);
    // A completed workflow moves its project's `updatedAt` (node a runs the builds; the runs of
    // the tests above end first, to leave it a slot).
    for (const old of a.builder.live()) old.finish();
    const sent = await result(a, token, 'svc_send_message', { projectId, message: 'Build it', kind: 'build' });
    const run = await waitFor(() => a.builder.runOf(sent.workflowId));
    run.finish();
    await waitFor(
      async () => (await result(a, token, 'svc_get_session', { projectId })).hasActiveWorkflows === false || undefined,
    );
    const changed = await read(a);
    expect(changed.updatedAt).not.toBe(first.updatedAt);
    // The other node: on SQLite at once; on PostgreSQL once the `cache` notice reached it, as its
    // project cache (docs/postgresql.md "The reply memo").
    if (store.exact) expect(await read(b)).toEqual(changed);
    else await waitFor(async () => (await read(b)).updatedAt === changed.updatedAt || undefined);
    expect(await read(b)).toEqual(changed);
  });

  it('a caller over its rate is refused by the limiter on a call the memo holds', async () => {
    const user = `dave-${store.name}`;
    const { token } = await a.app.tokens.create(user);
    await a.app.tokens.setPlan(user, TIGHT);
    const { id: projectId } = await result(a, token, 'svc_create_project', { name: 'Limited' });
    // The create counted once: the rest of the window is reads of one kept reply.
    const replies = [];
    for (let i = 1; i < TIGHT_RATE; i++) replies.push(await call(a, token, 'svc_get_project', { projectId }));
    expect(replies.map((r) => r.status)).toEqual(Array(TIGHT_RATE - 1).fill(200));
    expect(replies.at(-1)!.headers.get('x-ratelimit-remaining')).toBe('0');
    const before = hits(a);
    const refused = await call(a, token, 'svc_get_project', { projectId });
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: -32005, data: { scope: 'requests', limit: TIGHT_RATE } });
    expect(refused.json.result).toBeUndefined();
    // Refused before the memo was looked at: no hit counted.
    expect(hits(a)).toBe(before);
  });

  it("never gives one caller's kept reply to another", async () => {
    const own = await result(a, alice.token, 'svc_create_project', { name: 'Private', visibility: 'private' });
    const open = await result(a, alice.token, 'svc_create_project', { name: 'Public', visibility: 'public' });
    for (let i = 0; i < 2; i++) {
      await result(a, alice.token, 'svc_get_project', { projectId: own.id });
      await result(a, alice.token, 'svc_list_projects', {});
    }
    const before = hits(a);
    const refused = await call(a, bob.token, 'svc_get_project', { projectId: own.id });
    expect(refused.json.error).toMatchObject({ code: -32003 });
    const bobs = await result(a, bob.token, 'svc_list_projects', {});
    expect(bobs.projects).toEqual([]);
    // A public project reads the same for both, yet each caller's first read runs the tool.
    const aliceRead = await call(a, alice.token, 'svc_get_project', { projectId: open.id }, 9);
    const bobRead = await call(a, bob.token, 'svc_get_project', { projectId: open.id }, 9);
    expect(bobRead.text).toBe(aliceRead.text);
    expect(hits(a)).toBe(before);
    // Another token of the same user is another caller too.
    const { token: second } = await a.app.tokens.create(`alice-${store.name}`);
    await result(a, second, 'svc_list_projects', {});
    expect(hits(a)).toBe(before);
  });
});
