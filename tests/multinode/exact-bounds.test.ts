/**
 * The running bounds are exact across engines (docs/workflows.md "Exact bounds"): with two real
 * worker processes on one PostgreSQL database, a user's plan bound (`maxRunningWorkflows: 2`) and
 * each worker's `--max-concurrent-workflows 2` hold at every instant of a burst, as sampled from
 * the workflows table (each sample one statement: one snapshot), and a user at the bound never
 * keeps a free slot from another user's claimable work.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolResult, waitFor } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { BOUNDED_PLAN, startCluster, type Cluster } from './harness.js';

/** Projects per user in the burst, and instructions per project. */
const PROJECTS = 6;
const SENDS = 2;
/** A generous budget for one quick probe build on a busy 2-core machine (the burst's budget is derived from it). */
const PER_BUILD_MS = 5_000;

/** One sample: running workflows per owner and per runner, at one instant. */
interface Sample {
  byOwner: Record<string, number>;
  byRunner: Record<string, number>;
}

describe.skipIf(!postgresAvailable())('exact running bounds over two workers', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 1, workers: 2, workerSlots: 2, leaseMs: 10_000 });
  }, 120_000);
  afterAll(() => cluster?.close());
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  /** One statement: the workflows holding a slot now, counted by owner and by runner. */
  async function sample(): Promise<Sample> {
    const rows = await cluster.sql<{ owner: string; runner: string }>(
      "select p.owner_id as owner, w.runner_id as runner from workflows w join projects p on p.id = w.project_id where w.status in ('running', 'cancelling')",
    );
    const byOwner: Record<string, number> = {};
    const byRunner: Record<string, number> = {};
    for (const r of rows) {
      byOwner[r.owner] = (byOwner[r.owner] ?? 0) + 1;
      byRunner[r.runner] = (byRunner[r.runner] ?? 0) + 1;
    }
    return { byOwner, byRunner };
  }

  it('a burst of 24 quick builds of two users: never more than 2 of a user, nor 2 on a worker, at any sampled instant', async () => {
    const api = cluster.api[0]!;
    const tokens = [await cluster.token('burst-a', BOUNDED_PLAN), await cluster.token('burst-b', BOUNDED_PLAN)];
    const projects = await Promise.all(
      tokens.flatMap((token, u) =>
        Array.from({ length: PROJECTS }, async (_, i) => ({
          token,
          id: (await toolResult(api.mcpUrl, token, 'svc_create_project', { name: `B${u}-${i}` })).id as string,
        })),
      ),
    );
    let sampling = true;
    const samples: Sample[] = [];
    const sampler = (async () => {
      while (sampling) samples.push(await sample());
    })();
    const total = projects.length * SENDS;
    try {
      // Every send at once: the workers' engines race for the same queued rows on every notice.
      await Promise.all(
        projects.flatMap((p) =>
          Array.from({ length: SENDS }, (_, i) =>
            toolResult(api.mcpUrl, p.token, 'svc_send_message', {
              projectId: p.id,
              message: `step ${i}`,
              kind: 'build',
            }),
          ),
        ),
      );
      await waitFor(
        async () => {
          const [done] = await cluster.sql<{ n: number }>(
            "select count(*)::int as n from workflows where status = 'completed'",
          );
          return done!.n === total;
        },
        total * PER_BUILD_MS,
        `the ${total} builds to complete`,
      );
    } finally {
      sampling = false;
      await sampler;
    }
    const worst = (pick: (s: Sample) => Record<string, number>) =>
      Math.max(0, ...samples.flatMap((s) => Object.values(pick(s))));
    expect(samples.length).toBeGreaterThan(0);
    const seen = { perUser: worst((s) => s.byOwner), perWorker: worst((s) => s.byRunner) };
    expect(seen.perUser <= 2 && seen.perWorker <= 2, JSON.stringify({ seen, samples: samples.length })).toBe(true);
    // Both workers built.
    expect(new Set(cluster.builds().map((b) => b.node))).toEqual(new Set(['worker-1', 'worker-2']));
  }, 240_000);

  it('a user at the bound leaves the free slots to another user: both of their builds run beside the first two', async () => {
    const api = cluster.api[0]!;
    const [held, other] = [await cluster.token('holder', BOUNDED_PLAN), await cluster.token('other', BOUNDED_PLAN)];
    const send = async (token: string, name: string, message: string) => {
      const project = await toolResult(api.mcpUrl, token, 'svc_create_project', { name });
      return toolResult(api.mcpUrl, token, 'svc_send_message', { projectId: project.id, message, kind: 'build' });
    };
    const running = async (ids: string[]) =>
      (
        await cluster.sql<{ n: number }>(
          "select count(*)::int as n from workflows where id = any($1) and status = 'running'",
          [ids],
        )
      )[0]!.n;
    // Three of the holder's: two run (the bound), one waits although two slots are free.
    const mine = [
      await send(held, 'H1', 'hold:h one'),
      await send(held, 'H2', 'hold:h two'),
      await send(held, 'H3', 'hold:h three'),
    ];
    await waitFor(
      async () => (await running(mine.map((w) => w.workflowId))) === 2,
      30_000,
      "two of the holder's builds to run",
    );
    // The other user's two take the two free slots at once, while the holder's third still waits.
    const theirs = [await send(other, 'O1', 'hold:o one'), await send(other, 'O2', 'hold:o two')];
    await waitFor(
      async () => (await running(theirs.map((w) => w.workflowId))) === 2,
      30_000,
      "the other user's builds to run",
    );
    expect(await running(mine.map((w) => w.workflowId))).toBe(2);
    cluster.release('h');
    cluster.release('o');
  }, 120_000);
});
