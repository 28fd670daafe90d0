/**
 * The limits hold across API nodes (docs/contract.md#limits-and-plans): two nodes on one
 * PostgreSQL database together allow exactly the plan's creations per hour and project cap, and of
 * the request rate at most the limit and at least the limit less what a node may hold unspent
 * (docs/postgresql.md "Request rate limiter"), however the concurrent calls are split between them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTool, type RawResponse } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { CAPPED_PLAN, startCluster, type ApiNode, type Cluster } from './harness.js';

/** `count` calls at once, alternating between the cluster's API nodes. */
function split(
  cluster: Cluster,
  count: number,
  call: (mcpUrl: string, i: number) => Promise<RawResponse>,
): Promise<RawResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => call(cluster.api[i % cluster.api.length]!.mcpUrl, i)));
}

describe.skipIf(!postgresAvailable())('limits across two API nodes', () => {
  let cluster: Cluster;

  // No worker: these limits are the API nodes' alone.
  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 2, workers: 0 });
  });
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it('130 concurrent calls of one token split over two nodes: at most 100 allowed, at least 95 (100 a minute)', async () => {
    const token = await cluster.token('rate', 'free');
    const answers = await split(cluster, 130, (mcpUrl) => callTool(mcpUrl, token, 'svc_list_projects'));
    const allowed = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(allowed.length + refused.length).toBe(130);
    expect(allowed.length).toBeLessThanOrEqual(100);
    expect(allowed.length).toBeGreaterThanOrEqual(95);
    expect(new Set(refused.map((r) => r.json.error.code))).toEqual(new Set([-32005]));
    // Both nodes allowed some and refused some: the count is shared, not per node.
    const byNode = (list: RawResponse[]) =>
      cluster.api.map((_, n) => answers.filter((r, i) => i % 2 === n && list.includes(r)).length);
    expect(byNode(allowed).every((n) => n > 0)).toBe(true);
    expect(byNode(refused).some((n) => n > 0)).toBe(true);
    // Refused afterwards through either node, once what the nodes hold is spent (under a lease each).
    for (const node of cluster.api) {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await callTool(node.mcpUrl, token, 'svc_list_projects')).status);
      expect(statuses.at(-1)).toBe(429);
    }
  });

  it('130 calls split unevenly (11 through one node first, then 119 through the other): at most 100, at least 95', async () => {
    const token = await cluster.token('rate-skewed', 'free');
    const [first, second] = cluster.api as [ApiNode, ApiNode];
    const early = await Promise.all(
      Array.from({ length: 11 }, () => callTool(first.mcpUrl, token, 'svc_list_projects')),
    );
    const late = await Promise.all(
      Array.from({ length: 119 }, () => callTool(second.mcpUrl, token, 'svc_list_projects')),
    );
    expect(early.every((r) => r.status === 200)).toBe(true);
    const allowed = [...early, ...late].filter((r) => r.status === 200).length;
    expect(allowed).toBeLessThanOrEqual(100);
    expect(allowed).toBeGreaterThanOrEqual(95);
    expect(late.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
  });

  it('30 concurrent creations split over two nodes: exactly 10 (10 an hour)', async () => {
    const token = await cluster.token('creator', 'free');
    const answers = await split(cluster, 30, (mcpUrl, i) =>
      callTool(mcpUrl, token, 'svc_create_project', { name: `P${i}` }),
    );
    const created = answers.filter((r) => r.status === 200);
    expect(created).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.json.error.code, r.json.error.data?.scope])).toEqual(
      Array(20).fill([429, -32005, 'project_creation']),
    );
    const [owned] = await cluster.sql(
      "select count(*)::int as n from projects p join users u on u.id = p.owner_id where u.name = 'creator'",
    );
    expect(owned.n).toBe(10);
  });

  it('20 concurrent creations against a cap of 5 projects: exactly 5', async () => {
    const token = await cluster.token('capped', CAPPED_PLAN);
    const answers = await split(cluster, 20, (mcpUrl, i) =>
      callTool(mcpUrl, token, 'svc_create_project', { name: `C${i}` }),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.json.error.code, r.json.error.data?.reason])).toEqual(
      Array(15).fill([403, -32003, 'project_limit_reached']),
    );
    const listed = await callTool(cluster.api[1]!.mcpUrl, token, 'svc_list_projects');
    expect(listed.json.result.structuredContent.projects).toHaveLength(5);
  });
});
