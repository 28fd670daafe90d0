/**
 * The engine's part of a cancel (docs/workflows.md "States"): the service has stored `cancelling`;
 * the builder is stopped and `cancelled` recorded by whoever holds the workflow, or by any engine
 * once no live runner does.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { EngineState } from './engine-state.js';
import type { GroupSweeps } from './group-sweeps.js';
import { recordStopped } from './run-endings.js';
import { waitForWorkflow } from './workflow-wait.js';

/**
 * Stops the builder of workflow `workflowId`, stored as `cancelling`, and records `cancelled` once
 * it has stopped (after `settings.cancelTimeoutMs` its process groups are killed first). For a
 * workflow another live runner holds, waits for that runner to record it, or for its lease to
 * expire (then records it here).
 * @returns when the workflow is terminal, or when the other runner did not finish in time
 *   (cancel timeout plus a lease).
 */
export async function cancelWorkflow(state: EngineState, groups: GroupSweeps, workflowId: string): Promise<void> {
  const { cancelTimeoutMs, leaseMs, pollIntervalMs } = state.settings;
  const run = state.runs.get(workflowId);
  if (run) {
    run.abort('cancel');
    await Promise.race([run.done, delay(cancelTimeoutMs, undefined, { ref: false })]);
    if (state.runs.has(workflowId)) await groups.killRun(run);
    await recordStopped(state, workflowId, state.runner.id);
    return;
  }
  const deadline = Date.now() + cancelTimeoutMs + leaseMs;
  for (;;) {
    const row = await state.deps.store.repos.workflows.findById(workflowId);
    if (!row || row.status !== 'cancelling') return;
    if (!state.liveHolder(row)) {
      await groups.killRecorded(row.id);
      await recordStopped(state, workflowId, row.runnerId);
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) return;
    // The holder heard the `workflow` notice: wait for it to record the end (a `project` notice),
    // or for its lease to run out (then this node records `cancelled` itself).
    const leaseLeft = (row.leaseExpiresAt ?? 0) - state.now() + 1;
    await waitForWorkflow(state.deps.store, row, (r) => r?.status !== 'cancelling', {
      timeoutMs: Math.max(1, Math.min(left, leaseLeft)),
      recheckMs: Math.min(100, pollIntervalMs),
    });
  }
}
