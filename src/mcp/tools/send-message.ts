/** `svc_send_message` (docs/workflows.md, docs/contract.md#tools). */
import { z } from 'zod';
import { sendMessageResultSchema } from '../../services/resource-shapes.js';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { boundedText, uuidParameter } from '../parameters.js';
import { MAX_CODE_ANSWER_LENGTH, MAX_MESSAGE_LENGTH } from '../../core/message-limits.js';
import { BUILDER_MESSAGE_RULES } from '../../builders/builder-registry.js';
import { CHANNEL_PATTERN, DEFAULT_CHANNEL, ROLLOUT_MAX, ROLLOUT_MIN, WORKFLOW_KINDS } from '../../core/releases.js';
import { confirmRollback } from './confirm-rollback.js';

/** Starts or queues a workflow, or answers the pending question; owner only. */
export const sendMessageTool = defineTool({
  name: 'svc_send_message',
  title: 'Send a build or deploy instruction, or answer the agent',
  description: [
    "Sends a message to the project's building agent. Only the project's owner may send.",
    "- To answer the session's pendingQuestion (see svc_get_session), pass questionId = pendingQuestion.questionId (a message with neither questionId nor kind is also taken as the answer while a question waits). An answer that breaks the question's rule (options or pattern) is refused with -32602 and the question stays pending.",
    // How to answer the builders' own kinds of question (the expo builder's code questions).
    ...BUILDER_MESSAGE_RULES,
    '- A message with kind and no questionId is always a new instruction, even while a question waits (that question stays pending and its workflow keeps its place; the new one is queued behind it). Always pass kind: "build" (change the app and publish a preview) or "deploy" (publish a release). Without kind (and with no question waiting) the server guesses: "deploy" only when the message begins with deploy, publish, release or ship as a command ("Deploy it", "Please publish to the stores"), else "build". The response\'s kind says which kind was started.',
    '- Releases (the latest update URL of each channel follows its deploys): kind "deploy" takes channel (default "production") and rolloutPercent (1..100, default 100: a staged rollout sends the deploy to that share of the channel\'s phones, the others keep the previous update; a later deploy at 100 or a rollback ends it). kind "rollback" with message = a deploy number ("3" or "#3", from deployments of svc_get_session) publishes that deploy\'s bundles again as a new deploy on its channel, to every phone of it. Confirm a rollback with the user before sending it; a client that declared elicitation is asked by the server itself, and a declined rollback answers status "cancelled". An unknown number is -32602 with error.data.numbers.',
    '- Going back: kind "restore" with message = a checkpoint\'s workflowId (svc_get_session checkpoints) or a deploy number ("3" or "#3") makes the app that checkpoint\'s files again, as a new build; every later checkpoint stays restorable. Each checkpoint has an export URL: a .zip of the app\'s source the user can run with npm install && npx expo start.',
    '- Retrying: when a send got no answer (the connection broke), send it again with the same requestId; pass a new requestId (such as a UUID) with every new message.',
    'Only one workflow runs per project at a time: when another is queued or active the new one is stored with status "queued" and a queuePosition, and starts by itself in order. Follow it with svc_get_session and waitSeconds (it returns when the workflow changes step, asks or ends) rather than polling, and read the conversation with svc_get_messages.',
    errorGuide([
      '-32602: a parameter is missing or invalid (error.data.issues lists each one); or a restore names no checkpoint of the project (error.data.checkpoints and error.data.deployNumbers list those that exist); or the message answers a pending question and breaks its rule (the question stays pending: ask the user for an answer that fits its options or pattern, then send it; for a code question fix the files named in error.data.issues and resend); or questionId is not the pending question (read svc_get_session again). To send a new instruction while a question waits, pass kind without questionId.',
      '-32004 (error.data.resource "project", reason "unknown id"): no project has this id. Check the id with svc_list_projects.',
      '-32003: the project belongs to another user. Anyone may read a public project, but only its owner may send to it. Do not retry.',
      '-32005 with error.data.scope "queued_workflows": the user already has as many queued workflows (over all projects) as the plan allows (error.data.limit). Nothing was stored. Wait until some start (svc_get_session with waitSeconds), or cancel some with svc_cancel_workflow, then send again.',
    ]),
  ].join('\n'),
  input: z.strictObject({
    projectId: uuidParameter('UUID of the project'),
    message: boundedText(
      MAX_CODE_ANSWER_LENGTH,
      `The instruction (what to build or deploy; at most ${MAX_MESSAGE_LENGTH} characters) or the answer to the pending question (at most ${MAX_MESSAGE_LENGTH} characters, or pendingQuestion.maxLength for a code question)`,
      { nonBlank: true },
    ),
    kind: z
      .enum(WORKFLOW_KINDS)
      .optional()
      .describe(
        'Workflow kind; pass it. "rollback": message is a deploy number ("3" or "#3"). "restore": the message names a checkpoint (a workflowId of svc_get_session checkpoints, or a deploy number such as "3" or "#3") and the app becomes its files again, as a new build. When absent: "deploy" only for a message that begins with deploy, publish, release or ship as a command, else "build"',
      ),
    channel: z
      .string()
      .regex(CHANNEL_PATTERN, 'must be a lowercase letter then up to 31 lowercase letters, digits or hyphens')
      .optional()
      .describe(
        `kind "deploy" only: the channel to publish on (default "${DEFAULT_CHANNEL}"); each channel has its own latest update URL`,
      ),
    rolloutPercent: z
      .number()
      .int()
      .min(ROLLOUT_MIN)
      .max(ROLLOUT_MAX)
      .optional()
      .describe(
        'kind "deploy" only: the share of the channel\'s phones that get it, 1..100 (default 100); the others keep the channel\'s previous update',
      ),
    questionId: uuidParameter('The pendingQuestion.questionId this message answers').optional(),
    requestId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Your id for this send (1..100 characters), to retry it safely: a repeat with the same requestId within 24 hours answers what the first send answered and records nothing new',
      ),
  }),
  output: sendMessageResultSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handle: (args, { caller, services, request }) =>
    // A rollback is confirmed by the person first, when the client can ask (docs/releases.md "Confirmation").
    args.kind === 'rollback' && args.questionId === undefined && request?.elicitation
      ? confirmRollback(args, request.elicitation, caller, services)
      : services.workflows.send(caller, args),
});
