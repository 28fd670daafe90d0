/** `svc_get_messages` (docs/contract.md#tools). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { uuidParameter } from '../parameters.js';
import { MESSAGES_PAGE_DEFAULT, MESSAGES_PAGE_MAX, messagesPageSchema } from '../../services/resource-shapes.js';

/** Pages through a project's conversation, oldest first. */
export const getMessagesTool = defineTool({
  name: 'svc_get_messages',
  title: 'Read the project conversation',
  description: [
    "Returns the project's conversation, oldest first: the user's instructions and answers, the agent's progress, questions and results, and system status and error messages, each with the workflowId it belongs to.",
    `To follow a running workflow, call it again with after = nextAfter of the previous page; hasMore says whether more messages are already waiting. limit is 1 to ${MESSAGES_PAGE_MAX} (default ${MESSAGES_PAGE_DEFAULT}).`,
    'Readable by the owner, and by anyone for a public project.',
    errorGuide([
      `-32602: a parameter is invalid (projectId not a UUID, after negative, limit outside 1 to ${MESSAGES_PAGE_MAX}); error.data.issues lists each one.`,
      '-32004 (error.data.resource "project", reason "unknown id"): no project has this id. Check the id with svc_list_projects.',
      "-32003: the project is another user's private project. You cannot read it; do not retry.",
    ]),
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    after: z.number().int().min(0).optional().describe('Return messages with seq greater than this (default 0)'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MESSAGES_PAGE_MAX)
      .optional()
      .describe(`Page size, 1 to ${MESSAGES_PAGE_MAX} (default ${MESSAGES_PAGE_DEFAULT})`),
  }),
  output: messagesPageSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handle: (args, { caller, services }) => services.workflows.messages(caller, args),
});
