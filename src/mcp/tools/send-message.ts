/** `svc_send_message` (spec sections 3 and 4, design section 4). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { boundedText, uuidParameter } from '../parameters.js';
import { MAX_MESSAGE_LENGTH } from '../../services/workflow-service.js';

/** Starts or queues a workflow, or answers the pending question; owner only. */
export const sendMessageTool = defineTool({
  name: 'svc_send_message',
  title: 'Send a build or deploy instruction, or answer the agent',
  description: [
    "Sends a message to the project's building agent. Only the project's owner may send.",
    '- If the session has a pendingQuestion (see svc_get_session), the message is the answer to it; give questionId to be sure you answer the question you read. An answer that breaks the question\'s rule (options or pattern) is refused with -32602 and the question stays pending.',
    '- Otherwise the message starts a new workflow: kind "build" or "deploy" as given, else "deploy" when the text asks to deploy, publish, release or ship, else "build".',
    'Only one workflow runs per project at a time: when another is queued or active the new one is stored with status "queued" and a queuePosition, and starts by itself in order. Poll svc_get_session until hasActiveWorkflows is false before sending unrelated follow-up work, and read progress with svc_get_messages.',
    "Errors: -32602 missing or invalid parameter, or a bad answer; -32004 unknown project; -32003 not the project's owner; -32001 bad API token; -32005 too many requests.",
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    message: boundedText(MAX_MESSAGE_LENGTH, 'The instruction (what to build or deploy) or the answer to the pending question', { nonBlank: true }),
    kind: z.enum(['build', 'deploy']).optional().describe('Workflow kind; inferred from the message when absent'),
    questionId: uuidParameter('The pendingQuestion.questionId this message answers').optional(),
  }),
  output: z.object({
    messageId: z.string(),
    workflowId: z.string().describe('The new workflow, or the one whose question was answered'),
    kind: z.enum(['build', 'deploy']),
    status: z.enum(['queued', 'running']).describe('"queued" when it waits for other workflows to finish'),
    queuePosition: z.number().int().optional().describe('1 = next to start; present when queued'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handle: (args, { caller, services }) => services.workflows.send(caller, args),
});
