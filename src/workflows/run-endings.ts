/**
 * How the end of a run is written (docs/workflows.md "States" and "Leases"): every end is a
 * compare-and-set on the runner that holds the workflow, gives the lease up, and posts the message
 * that reports it. A run that lost its lease writes nothing.
 */
import { join } from 'node:path';
import type { WorkflowRow } from '../store/rows.js';
import type { EngineState } from './engine-state.js';
import type { LocalRun } from './local-run.js';
import { kindLabel, type TransitionOptions } from './workflow-journal.js';
import type { CompletionHook } from './workspace-sync.js';

/** A builder's failure as stored: its code and its message (no server paths). */
export interface RunFailure {
  code: string;
  message: string;
}

const INTERRUPTED_BY_STOP =
  'The server running this workflow stopped or lost contact. Send the instruction again to retry.';
const INTERRUPTED_AT_SHUTDOWN =
  'The server shut down while this workflow was running. Send the instruction again to retry.';
const RELEASED = { runnerId: null, leaseExpiresAt: null };

/**
 * The columns and message of `running -> failed` with `error.code = "interrupted"`, the lease given
 * up: `stop` when the reaper takes over from a runner that stopped or lost contact, `shutdown` when
 * this server shuts down.
 */
export function interrupted(
  row: Pick<WorkflowRow, 'kind'>,
  why: 'stop' | 'shutdown',
): Pick<TransitionOptions, 'patch' | 'message'> {
  const reason = why === 'stop' ? INTERRUPTED_BY_STOP : INTERRUPTED_AT_SHUTDOWN;
  return {
    patch: { errorCode: 'interrupted', errorMessage: reason, ...RELEASED },
    message: { role: 'system', type: 'error', content: `${kindLabel(row.kind)} interrupted: ${reason}` },
  };
}

/** The columns and message of `cancelling -> cancelled`, the lease given up. */
export function stopped(row: Pick<WorkflowRow, 'kind'>): Pick<TransitionOptions, 'patch' | 'message'> {
  return { patch: RELEASED, message: { role: 'system', type: 'status', content: `${kindLabel(row.kind)} cancelled.` } };
}

/** Records `cancelled` for a workflow stored as `cancelling` while `owner` holds it (`null`: nobody). */
export async function recordStopped(state: EngineState, workflowId: string, owner: string | null): Promise<void> {
  const row = await state.deps.store.repos.workflows.findById(workflowId);
  if (!row) return;
  await state.deps.journal.transition(row, 'cancelling', 'stopped', { ...stopped(row), owner });
}

/**
 * Writes how a local run ended, as compare-and-sets on this runner (a run that lost its lease
 * writes nothing): at shutdown `interrupted` (a waiting one only gives its lease up); after a
 * cancel `cancelled`; else `failed` with `failure`, or `completed` (with the workspace snapshot,
 * docs/postgresql.md#workspace-snapshots).
 */
export async function recordEnd(state: EngineState, run: LocalRun, failure: RunFailure | null): Promise<void> {
  if (run.lost) return;
  const { journal, logger } = state.deps;
  const { workflows } = state.deps.store.repos;
  const row = await workflows.findById(run.workflowId);
  if (!row || row.runnerId !== state.runner.id) return;
  const owner = state.runner.id;
  const cause = run.cause;
  if (cause === 'shutdown') {
    if (row.status === 'running')
      await journal.transition(row, 'running', 'interrupt', { ...interrupted(row, 'shutdown'), owner });
    else if (row.status === 'waiting_for_input') await workflows.releaseWaiting(row.id, owner);
    else if (row.status === 'cancelling') await recordStopped(state, row.id, owner);
    return;
  }
  // A cancel that raced with the builder's end wins: the user asked for it.
  if (cause === 'cancel' || row.status === 'cancelling') {
    await recordStopped(state, row.id, owner);
    return;
  }
  if (failure) {
    await journal.transition(row, 'running', 'fail', {
      patch: { errorCode: failure.code, errorMessage: failure.message, ...RELEASED },
      message: { role: 'system', type: 'error', content: `${kindLabel(row.kind)} failed: ${failure.message}` },
      owner,
    });
    logger.info({ workflowId: row.id, code: failure.code }, 'workflow failed');
  } else {
    const complete = (hook?: CompletionHook) =>
      journal.transition(row, 'running', 'complete', {
        patch: RELEASED,
        message: { role: 'system', type: 'status', content: `${kindLabel(row.kind)} completed.` },
        owner,
        onCompleted: hook,
      });
    await (state.deps.workspaceSync?.complete(row, join(state.deps.dataDir, 'workspaces', row.projectId), complete) ??
      complete());
    logger.info({ workflowId: row.id }, 'workflow completed');
  }
}
