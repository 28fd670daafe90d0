/**
 * The row of a workflow as a send creates it (docs/workflows.md): one shape for every kind.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowRow } from '../store/rows.js';

/** A new workflow row of project `projectId` (queued unless `status` says otherwise). */
export function newWorkflowRow(
  fields: Pick<WorkflowRow, 'projectId' | 'seq' | 'kind' | 'instruction' | 'createdAt' | 'builder'> &
    Partial<Pick<WorkflowRow, 'status' | 'finishedAt'>>,
): WorkflowRow {
  return {
    id: randomUUID(),
    status: 'queued',
    stepIndex: 0,
    stepTotal: 0,
    stepName: null,
    runnerId: null,
    leaseExpiresAt: null,
    errorCode: null,
    errorMessage: null,
    startedAt: null,
    finishedAt: null,
    ...fields,
  };
}
