/** `svc_get_session` (docs/workflows.md, docs/contract.md#tools). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { uuidParameter } from '../parameters.js';
import { sessionSchema } from '../../services/resource-shapes.js';

/** Reports a project's workflows, pending question and preview URLs. */
export const getSessionTool = defineTool({
  name: 'svc_get_session',
  title: 'Get the build session of a project',
  description: [
    "Reports the project's workflows: the active one (running, waiting_for_input or cancelling) with its current step, the queued ones in start order, the last finished one with its error if it failed, the agent's pendingQuestion if it waits for an answer, and the project's latest preview and deployment URLs. Each workflow has a title (its instruction's first line: tell the user which queued workflow is which by it); each deployment a deployNumber, shared by the platforms one deploy published (say: deploy #3: web, ios, android).",
    'hasActiveWorkflows is true while any workflow is queued or active: poll this tool (every few seconds) until it is false before sending unrelated work. When pendingQuestion is set, answer it with svc_send_message (message = the answer, questionId = pendingQuestion.questionId). pendingQuestion.kind "text" is for the user (relay it, send their answer); kind "code" is for you: its prompt is a coding task on the app, and you answer with the JSON files described in pendingQuestion.format (see svc_send_message).',
    'Readable by the owner, and by anyone for a public project.',
    errorGuide([
      '-32602: projectId is missing or not a UUID. Take ids from svc_list_projects.',
      '-32004 (error.data.resource "project", reason "unknown id"): no project has this id. Check the id with svc_list_projects.',
      "-32003: the project is another user's private project. You cannot read it; do not retry.",
    ]),
  ].join('\n'),
  input: z.strictObject({ projectId: uuidParameter('UUID of the project') }),
  output: sessionSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handle: ({ projectId }, { caller, services }) => services.workflows.session(caller, projectId),
});
