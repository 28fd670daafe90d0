/** `svc_cancel_workflow` (spec section 4, design section 4). */
import { z } from 'zod';
import { WORKFLOW_STATUSES } from '../../workflows/workflow-states.js';
import { defineTool } from '../define-tool.js';
import { uuidParameter } from '../parameters.js';

/** Cancels the named or the active workflow of a project; owner only. */
export const cancelWorkflowTool = defineTool({
  name: 'svc_cancel_workflow',
  title: 'Cancel a workflow',
  description: [
    'Cancels a workflow of the project: the one named by workflowId, or else the active one. A queued workflow is cancelled at once; an active one is stopped (its build process is killed) before the call returns with status "cancelled". Queued workflows behind it then start in order.',
    'Cancelling a workflow that already finished is not an error: cancelled is false and status is its final status.',
    "Only the project's owner may cancel. Errors: -32602 invalid parameter; -32004 unknown project or workflow, or no active workflow when workflowId is omitted; -32003 not the project's owner; -32001 bad API token; -32005 too many requests.",
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    workflowId: uuidParameter('The workflow to cancel; default the active one').optional(),
  }),
  output: z.object({
    workflowId: z.string(),
    status: z.enum(WORKFLOW_STATUSES),
    cancelled: z.boolean().describe('true when this call cancelled the workflow; false when it had already finished'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handle: (args, { caller, services }) => services.workflows.cancel(caller, args),
});
