/** `svc_cancel_workflow` (docs/contract.md#tools). */
import { z } from 'zod';
import { cancelResultSchema } from '../../services/resource-shapes.js';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { uuidParameter } from '../parameters.js';

/** Cancels the named or the active workflow of a project; owner only. */
export const cancelWorkflowTool = defineTool({
  name: 'svc_cancel_workflow',
  title: 'Cancel a workflow',
  description: [
    'Cancels a workflow of the project: the one named by workflowId, or else the active one. A queued workflow is cancelled at once; an active one is stopped (its build process is killed) before the call returns with status "cancelled". Queued workflows behind it then start in order.',
    'Cancelling a workflow that already finished is not an error: cancelled is false and status is its final status.',
    "Only the project's owner may cancel.",
    errorGuide([
      '-32602: projectId or workflowId is not a UUID.',
      '-32004: error.data says what was not found: resource "project" (no project has this id), resource "workflow" with reason "unknown id" (no workflow of this project has workflowId) or reason "none active" (without workflowId: nothing is active, so there is nothing to cancel; queued workflows are cancelled by id: take it from svc_get_session\'s queuedWorkflows).',
      '-32003: the project belongs to another user; only its owner may cancel. Do not retry.',
    ]),
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    workflowId: uuidParameter('The workflow to cancel; default the active one').optional(),
  }),
  output: cancelResultSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handle: async (args, { caller, services }) => {
    const result = await services.workflows.cancel(caller, args);
    // Operators see who stopped what (docs/contract.md#tokens-and-security: never a token).
    if (result.cancelled)
      services.logger?.info(
        { user: caller.userName, projectId: args.projectId, workflowId: result.workflowId },
        'workflow cancelled by its owner',
      );
    return result;
  },
});
