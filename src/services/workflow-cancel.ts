/**
 * `svc_cancel_workflow` (docs/contract.md#tools, docs/workflows.md): a queued workflow is cancelled
 * at once; an active one moves to `cancelling` and the engine stops it.
 */
import type { Caller } from '../auth/caller.js';
import { notFound } from '../errors.js';
import type { Repos } from '../store/repos.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import { kindLabel, type WorkflowJournal } from '../workflows/workflow-journal.js';
import { isTerminal, statusesBefore } from '../core/workflow-states.js';
import type { ProjectAccess } from './project-access.js';
import type { CancelResult } from './resource-shapes.js';

/** What a cancel needs: the write access rule, the workflow rows, the journal and the engine. */
export interface CancelDeps {
  access: Pick<ProjectAccess, 'writable'>;
  repos: Pick<Repos, 'workflows'>;
  journal: Pick<WorkflowJournal, 'transition'>;
  engine: Pick<WorkflowEngine, 'cancel'>;
}

/**
 * Cancels a workflow of the project: the given one, else the active one. A queued workflow is
 * cancelled at once; an active one is stopped (its builder killed after a grace period) before
 * this returns. A finished one is left as it is (`cancelled: false`).
 * @throws ServiceError -32004 when the workflow is unknown or not the project's (`data`
 *   `{resource: "workflow", reason: "unknown id"}`), or when no workflow is active and none was
 *   named (`{resource: "workflow", reason: "none active"}`); -32003 for a project the caller
 *   does not own.
 */
export async function cancelWorkflow(
  deps: CancelDeps,
  caller: Caller,
  input: { projectId: string; workflowId?: string | undefined },
): Promise<CancelResult> {
  const { access, journal, engine } = deps;
  const { workflows } = deps.repos;
  await access.writable(caller, input.projectId);
  const target = input.workflowId
    ? await workflows.findById(input.workflowId)
    : await workflows.findActive(input.projectId);
  // Another project's workflow is "unknown id" too: its existence is not the caller's to learn.
  if (!target || target.projectId !== input.projectId)
    throw notFound({ resource: 'workflow', reason: input.workflowId ? 'unknown id' : 'none active' });

  if (isTerminal(target.status)) return { workflowId: target.id, status: target.status, cancelled: false };

  const label = kindLabel(target.kind);
  if (
    await journal.transition(target, 'queued', 'cancel', {
      message: { role: 'system', type: 'status', content: `${label} cancelled before it started.` },
    })
  ) {
    return { workflowId: target.id, status: 'cancelled', cancelled: true };
  }
  const cancelling = {
    role: 'system' as const,
    type: 'status' as const,
    content: `Cancelling the ${label.toLowerCase()}…`,
  };
  // The status may move between the read and the write: try each active status in turn.
  for (const from of statusesBefore('cancel', 'cancelling'))
    if (await journal.transition(target, from, 'cancel', { message: cancelling })) break;
  await engine.cancel(target.id);
  const final = (await workflows.findById(target.id))!;
  return { workflowId: final.id, status: final.status, cancelled: final.status === 'cancelled' };
}
