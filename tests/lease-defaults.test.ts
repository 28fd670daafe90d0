/**
 * Lease defaults and the reaper's wake (docs/workflows.md, "Leases"): a claim holds a 2.5 s lease
 * by default, and a workflow whose runner died elsewhere is taken over when its lease ends, not at
 * the engine's next tick (the harness's tick is an hour, so only the wake can do it).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/core/defaults.js';
import { startEngine, type EngineUnderTest } from './engine-harness.js';

const engines: EngineUnderTest[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop();
});

describe('lease defaults', () => {
  it('a claim holds the default lease of 2.5 s, so that a takeover after a crash takes under 3 s', async () => {
    const e = await startEngine();
    engines.push(e);
    const { workflowId } = await e.send(await e.createProject());
    await e.running(workflowId);
    const leaseEnd = e.row(workflowId).leaseExpiresAt!;
    // Written at or before now: its end is at most the default lease from now (8 s before).
    expect(DEFAULTS.leaseMs).toBe(2500);
    expect(leaseEnd).toBeLessThanOrEqual(Date.now() + DEFAULTS.leaseMs);
    e.builder.runOf(workflowId)!.finish();
    await e.reach(workflowId, 'completed');
  });

  it("the reaper wakes when another host's lease ends and takes its workflow over without waiting for a tick", async () => {
    const first = await startEngine();
    const { workflowId } = await first.send(await first.createProject());
    await first.running(workflowId);
    await first.crash();
    // As if a runner on another host held it: no pid of ours to find dead, only its lease counts.
    const db = new Database(join(first.dataDir, 'mobile-builder.db'));
    db.prepare('update workflows set runner_id = ?, lease_expires_at = ? where id = ?').run(
      'elsewhere:4242:n0nce',
      Date.now() + 300,
      workflowId,
    );
    db.close();

    const second = await startEngine({ dataDir: first.dataDir });
    engines.push(second);
    const row = await second.reach(workflowId, 'failed');
    expect(row).toMatchObject({ errorCode: 'interrupted', runnerId: null });
  });
});
