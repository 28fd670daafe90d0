/**
 * Limits shared through the store (docs/contract.md "Limits and plans"): two real server processes on one
 * data dir count one key's tool calls in the same window, so together they accept the plan's
 * limit, not twice it (exactly the limit when it is low enough for a lease of one count).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { post, tempDir } from './helpers.js';

const dataDir = tempDir();
const servers: SpawnedServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('two processes on one data dir', () => {
  it('accept exactly the plan limit of one key in total (30 of 80 tool calls)', async () => {
    const plans = join(dataDir, 'plans.json');
    writeFileSync(plans, JSON.stringify({ free: { requestsPerMinute: 30 } }));
    const token = cliToken(dataDir, 'alice');
    // One after the other, so that the second start finds the migrations applied.
    servers.push(await spawnHttpServer(dataDir, ['--plans', plans, '--log-level', 'warn']));
    servers.push(await spawnHttpServer(dataDir, ['--plans', plans, '--log-level', 'warn']));
    const statuses = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        post(
          servers[i % 2]!.mcpUrl,
          { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_list_projects' } },
          token,
        ).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    // The window is the same in both processes: each now refuses.
    for (const s of servers) {
      const res = await post(
        s.mcpUrl,
        { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'svc_list_projects' } },
        token,
      );
      expect(res.status).toBe(429);
      expect(res.json.error.data).toMatchObject({ scope: 'requests', limit: 30 });
    }
  });

  it('with the default free plan (leases of 6 counts), two processes together never pass the limit: 100 of 300', async () => {
    const token = cliToken(dataDir, 'bob');
    const port = (s: SpawnedServer) => s.mcpUrl;
    const defaults = [
      await spawnHttpServer(dataDir, ['--log-level', 'warn']),
      await spawnHttpServer(dataDir, ['--log-level', 'warn']),
    ];
    servers.push(...defaults);
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post(
          port(defaults[i % 2]!),
          { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_list_projects' } },
          token,
        ).then((r) => r.status),
      ),
    );
    // Each process may keep fewer than one lease unspent while the other refuses: at most 2 x 5.
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeLessThanOrEqual(100);
    expect(accepted).toBeGreaterThanOrEqual(90);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });
});
