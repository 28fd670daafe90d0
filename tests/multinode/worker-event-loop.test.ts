/**
 * A live worker keeps its lease on a busy machine (docs/metrics.md, `mbm_build_event_loop_delay_seconds`;
 * docs/operators.md "When a worker dies or stalls"): one worker runs four builds that each ask a
 * question, are answered, publish a web preview and store a workspace snapshot of a few MB (packed
 * as tar.gz into the database), while two `yes > /dev/null` keep both cores busy. No lease is lost,
 * every build completes, and the worker's own measure of its event-loop delay during the builds,
 * read from its `/metrics`, has a p99 of at most 200 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolResult, waitFor } from '../helpers.js';
import { postgresAvailable } from '../setup/pg-database.js';
import { startCluster, type Cluster } from './harness.js';

/** Builds on the one worker. */
const BUILDS = 4;
/** MB of random bytes each build puts in its workspace and as much in its preview. */
const BULK_MB = 8;
/** The bound on the p99 of the worker's event-loop delay during builds (s): a small part of any lease. */
const MAX_P99_SECONDS = 0.2;
/** How long one build, its answer and its snapshot may take on a busy 2-core machine (ms). */
const BUILD_BUDGET_MS = 60_000;

/** The value of `mbm_build_event_loop_delay_seconds{quantile="<q>"}` in a scrape, or undefined. */
function loopDelay(metrics: string, quantile: string): number | undefined {
  const m = new RegExp(`^mbm_build_event_loop_delay_seconds\\{quantile="${quantile}"\\} (\\S+)$`, 'm').exec(metrics);
  return m ? Number(m[1]) : undefined;
}

describe.skipIf(!postgresAvailable())('a worker on a busy machine', () => {
  let cluster: Cluster;
  const burners: ChildProcess[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ apiNodes: 1, workers: 1 });
  }, 180_000);
  afterAll(async () => {
    for (const burner of burners) burner.kill('SIGKILL');
    await cluster?.close();
  });
  beforeEach(({ onTestFailed }) => onTestFailed(() => void process.stderr.write(cluster.problems())));

  it('keeps its leases through four answered builds with both cores busy; its event-loop delay p99 stays within 200 ms', async () => {
    const [api] = cluster.api;
    const [worker] = cluster.workers;
    const token = await cluster.token('ivy');
    // Both cores busy for the whole test.
    for (let i = 0; i < 2; i++) burners.push(spawn('sh', ['-c', 'exec yes > /dev/null'], { stdio: 'ignore' }));

    const sent: { projectId: string; workflowId: string }[] = [];
    for (let i = 0; i < BUILDS; i++) {
      const project = await toolResult(api!.mcpUrl, token, 'svc_create_project', { name: `Busy ${i}` });
      const workflow = await toolResult(api!.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: `bulk:${BULK_MB} ask`,
        kind: 'build',
      });
      sent.push({ projectId: project.id, workflowId: workflow.workflowId });
    }
    // Each question answered as it comes (two slots: the others wait in the queue meanwhile).
    const answered = new Set<string>();
    await waitFor(
      async () => {
        for (const { projectId } of sent) {
          const session = await toolResult(api!.mcpUrl, token, 'svc_get_session', { projectId });
          const question = session.pendingQuestion;
          if (question && !answered.has(question.questionId)) {
            await toolResult(api!.mcpUrl, token, 'svc_send_message', {
              projectId,
              message: 'com.example.busy',
              questionId: question.questionId,
            });
            answered.add(question.questionId);
          }
        }
        const rows = await cluster.sql(
          "select status from workflows where status not in ('completed', 'failed', 'cancelled')",
        );
        return rows.length === 0;
      },
      BUILD_BUDGET_MS * BUILDS,
      'every build to end',
    );
    for (const burner of burners.splice(0)) burner.kill('SIGKILL');

    const metrics = await (await fetch(`${worker!.healthUrl}/metrics`)).text();
    const p99 = loopDelay(metrics, '0.99');
    process.stderr.write(
      `[worker-event-loop] build event-loop delay: p50 ${loopDelay(metrics, '0.5')} s, p99 ${p99} s, max ${loopDelay(metrics, '1')} s\n`,
    );
    const rows = await cluster.sql('select status, error_code from workflows');
    expect(rows).toEqual(sent.map(() => ({ status: 'completed', error_code: null })));
    expect(answered.size).toBe(BUILDS);
    expect(worker!.stderr()).not.toMatch(/lost the lease|lost its lease/);
    expect(p99).toBeDefined();
    expect(p99!).toBeLessThanOrEqual(MAX_P99_SECONDS);
  }, 600_000);
});
