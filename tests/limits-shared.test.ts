/**
 * Limits shared through the store (README "Limits and plans"): two real server processes on one
 * data dir count one key's tool calls in the same window, so together they accept exactly the
 * plan's limit, not twice it.
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
        post(servers[i % 2]!.mcpUrl, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_list_projects' } }, token).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    // The window is the same in both processes: each now refuses.
    for (const s of servers) {
      const res = await post(s.mcpUrl, { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'svc_list_projects' } }, token);
      expect(res.status).toBe(429);
      expect(res.json.error.data).toMatchObject({ scope: 'requests', limit: 30 });
    }
  });
});
