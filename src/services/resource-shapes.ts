/**
 * The shapes the services return and the tools answer with (docs/contract.md#tools), declared
 * once, as zod: each tool's `outputSchema` is generated from them and the services' result types
 * are inferred from them, so a shape cannot drift between the two.
 */
import { z } from 'zod';
import { DEPLOYMENT_STATES, WORKFLOW_KINDS } from '../core/releases.js';
import { WORKFLOW_STATUSES } from '../core/workflow-states.js';

/** Longest project name, in code points. */
export const PROJECT_NAME_MAX = 255;
/** Longest project description, in code points. */
export const PROJECT_DESCRIPTION_MAX = 1000;
/** Largest and default page of `svc_get_messages`. */
export const MESSAGES_PAGE_MAX = 500;
export const MESSAGES_PAGE_DEFAULT = 100;
/** Longest workflow `title` (the instruction's first line), in code points. */
export const WORKFLOW_TITLE_MAX = 120;
/** Checkpoints a session lists (`checkpoints`, newest first). */
export const CHECKPOINTS_SHOWN = 20;

const timestamp = z.string().describe('ISO 8601 UTC timestamp with milliseconds');

/** A project. */
export const projectSchema = z.object({
  id: z.string().describe('Project UUID'),
  name: z.string(),
  description: z.string().nullable().describe('null when none was set'),
  visibility: z.enum(['public', 'private']),
  createdAt: timestamp,
  updatedAt: timestamp.describe('ISO 8601 timestamp of the last update (moves when a workflow completes)'),
});

/** A preview or deployment link, absolute, built at read time. */
const previewUrlSchema = z.object({
  url: z.string().describe('Absolute URL to open in a browser'),
  platform: z.enum(['web', 'ios', 'android']),
  kind: z.enum(['preview', 'deployment']),
  deployNumber: z
    .number()
    .int()
    .nullable()
    .describe(
      'Deployments: the deploy\'s number in the project (1, 2, ...), shared by every platform one deploy published ("deploy #3: web, ios, android"); null for previews',
    ),
  workflowId: z.string().nullable(),
  createdAt: timestamp,
});

/** A workflow as clients see it; `step.index` is 1-based (0 before the first step). */
export const workflowSchema = z.object({
  id: z.string(),
  kind: z.enum(WORKFLOW_KINDS),
  title: z
    .string()
    .describe(
      `The instruction's first line, at most ${WORKFLOW_TITLE_MAX} characters (cut with "…"): tells queued workflows apart`,
    ),
  status: z.enum(WORKFLOW_STATUSES),
  step: z.object({ index: z.number().int(), total: z.number().int(), name: z.string().nullable() }),
  createdAt: timestamp,
  startedAt: timestamp.nullable(),
  finishedAt: timestamp.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  previewUrls: z.array(previewUrlSchema),
  export: z
    .string()
    .nullable()
    .describe(
      "A completed workflow's checkpoint: absolute URL of a .zip of the app's source as it completed (runs with npm install && npx expo start); null when none",
    ),
});

/** A checkpoint: the app's files as a completed workflow left them (docs/builders.md "Checkpoints"). */
const checkpointSchema = z.object({
  workflowId: z.string().describe('Pass it as the message of kind "restore" to make the app these files again'),
  deployNumber: z.number().int().nullable().describe('The deploy this checkpoint was deployed as; null for a build'),
  createdAt: timestamp,
  export: z.string().describe("Absolute URL of a .zip of the app's source (runs with npm install && npx expo start)"),
});

/** The unanswered question of a waiting workflow. */
const pendingQuestionSchema = z.object({
  questionId: z.string(),
  workflowId: z.string(),
  kind: z
    .enum(['text', 'code'])
    .describe(
      '"text": ask the user and send their answer. "code": the building agent asks YOU for code: follow prompt and answer with JSON matching format',
    ),
  prompt: z.string(),
  options: z.array(z.string()).optional(),
  pattern: z.string().optional(),
  format: z.record(z.string(), z.unknown()).optional().describe('Code questions: JSON Schema of the answer'),
  maxLength: z.number().int().optional().describe('Code questions: longest answer, in characters'),
  askedAt: timestamp,
});

/** One conversation message. */
const messageSchema = z.object({
  id: z.string(),
  seq: z.number().int().describe('Position in the project conversation; pass as `after` to read on'),
  role: z.enum(['user', 'agent', 'system']),
  type: z.enum(['instruction', 'answer', 'question', 'progress', 'result', 'error', 'status']),
  content: z.string(),
  workflowId: z.string().nullable(),
  createdAt: timestamp,
});

/** One deploy of the project's history (docs/releases.md). */
const deploymentSchema = z.object({
  number: z.number().int().describe('The deploy number (deployNumber of its preview URLs)'),
  channel: z.string().describe('The channel it was published on ("production" unless the deploy named one)'),
  rolloutPercent: z.number().int().describe("1..100: the share of the channel's phones that get it"),
  createdAt: timestamp,
  platforms: z.array(z.enum(['web', 'ios', 'android'])),
  sdks: z.array(z.number().int()).describe('The Expo SDKs its native updates serve'),
  workflowId: z.string(),
  state: z
    .enum(DEPLOYMENT_STATES)
    .describe(
      "serving: what the channel's phones get (outside a rollout: all of them); rolling_out: a staged rollout under way; superseded: a later deploy replaced it; rolled_back: a rollback to an earlier deploy replaced it",
    ),
  rollbackOf: z.number().int().optional().describe('Present on a rollback: the deploy number it published again'),
});
/** One deploy of `svc_get_session`'s `deployments`. */
export type DeploymentView = z.infer<typeof deploymentSchema>;

/** `svc_list_projects`'s response. */
export const projectListSchema = z.object({ projects: z.array(projectSchema) });

/** `svc_send_message`'s response; `queuePosition` only when queued. */
export const sendMessageResultSchema = z.object({
  messageId: z.string(),
  workflowId: z.string().describe('The new workflow, or the one whose question was answered'),
  kind: z.enum(WORKFLOW_KINDS).describe('The kind of the workflow started (as passed, or as guessed from the message)'),
  status: z
    .enum(['queued', 'running', 'cancelled'])
    .describe(
      '"queued" when it waits for other workflows to finish; "cancelled" when the user declined to confirm a rollback (nothing was rolled back)',
    ),
  queuePosition: z.number().int().optional().describe('1 = next to start; present when queued'),
});

/** `svc_get_session`'s response. */
export const sessionSchema = z.object({
  projectId: z.string(),
  hasActiveWorkflows: z.boolean(),
  activeWorkflow: workflowSchema.nullable(),
  queuedWorkflows: z.array(workflowSchema),
  pendingQuestion: pendingQuestionSchema.nullable(),
  previewUrls: z.array(previewUrlSchema).describe('Latest preview and deployment of each platform'),
  lastWorkflow: workflowSchema.nullable(),
  deployments: z
    .array(deploymentSchema)
    .describe("The project's last 20 deploys (rollbacks included), newest first, each with its channel and state"),
  checkpoints: z
    .array(checkpointSchema)
    .describe(
      `The project's newest ${CHECKPOINTS_SHOWN} checkpoints, newest first: every completed workflow of a builder that keeps them (the expo builder)`,
    ),
  environment: z
    .array(z.object({ name: z.string(), secret: z.boolean() }))
    .describe(
      "The project's environment variables, by name (set by the operator's `env set` or in the web console, never through the chat): EXPO_PUBLIC_* ones reach the app; secrets reach only the build's own processes. Values are never shown",
    ),
  waitingFor: z
    .string()
    .optional()
    .describe(
      'Present when the next queued workflow cannot start because no build worker has its builder: "waiting for a worker with the expo builder" (tell the user; the operator must start one)',
    ),
  wait: z
    .object({
      changed: z
        .boolean()
        .describe('true when the call returned because the followed workflow changed (status, step, question, end)'),
      reason: z
        .enum(['changed', 'time_up', 'nothing_active', 'question_pending', 'client_gone', 'superseded'])
        .describe(
          "question_pending: the followed workflow's question was already asked and waits for its answer (returned at once); superseded: the caller opened more waits than a user may hold, and this, the oldest, was ended",
        ),
      cappedAtSeconds: z
        .number()
        .int()
        .optional()
        .describe('Present when waitSeconds was larger than a wait may run: the wait ran at most this many seconds'),
    })
    .optional()
    .describe('Present when waitSeconds > 0: why the wait ended'),
  screenshot: z
    .object({
      status: z.enum(['taken', 'unavailable']),
      reason: z
        .string()
        .optional()
        .describe('Why there is no image (no web preview, no browser, the page failed to render)'),
      busy: z
        .literal(true)
        .optional()
        .describe(
          'Present when there is no image only because the server was busy taking other screenshots: ask again in a few seconds. Absent when the preview failed to render (not retried for 10 min)',
        ),
      previewUrl: z.string().optional().describe('The web preview the image shows'),
      width: z.number().int().optional().describe('CSS pixels of the phone-sized viewport'),
      height: z.number().int().optional(),
    })
    .optional()
    .describe('Present when screenshot was asked for: the image is the image/png item of content'),
  elicitation: z
    .object({
      questionId: z.string(),
      action: z
        .enum(['accept', 'decline', 'cancel'])
        .describe('What the user did with the question the server asked them (MCP elicitation)'),
      answered: z
        .boolean()
        .describe('true when their answer was sent: the workflow goes on; false: the question is still pending'),
      note: z.string(),
    })
    .optional()
    .describe(
      'Present when the server asked the user the pending text question itself (the client declared elicitation)',
    ),
  questionFiles: z
    .object({
      questionId: z.string(),
      page: z.number().int(),
      pages: z.number().int(),
      files: z.array(
        z.object({
          path: z.string(),
          content: z.string(),
          cut: z.boolean().optional().describe('true when the file is longer than a page: content is its start'),
        }),
      ),
    })
    .optional()
    .describe(
      'Present with questionFilesPage: one page of the app files of the pending code question (pendingQuestion.prompt is then left out)',
    ),
});

/** `svc_get_messages`'s response: pass `nextAfter` as `after` to read on. */
export const messagesPageSchema = z.object({
  messages: z.array(messageSchema),
  hasMore: z.boolean(),
  nextAfter: z.number().int().describe('Pass as `after` to read the next page'),
});

/** `svc_cancel_workflow`'s response; `cancelled` is true only when this call cancelled it. */
export const cancelResultSchema = z.object({
  workflowId: z.string(),
  status: z.enum(WORKFLOW_STATUSES),
  cancelled: z.boolean().describe('true when this call cancelled the workflow; false when it had already finished'),
});

export type Project = z.infer<typeof projectSchema>;
export type PreviewUrl = z.infer<typeof previewUrlSchema>;
export type WorkflowView = z.infer<typeof workflowSchema>;
export type CheckpointView = z.infer<typeof checkpointSchema>;
export type PendingQuestion = z.infer<typeof pendingQuestionSchema>;
export type MessageView = z.infer<typeof messageSchema>;
export type SendMessageResult = z.infer<typeof sendMessageResultSchema>;
export type SessionView = z.infer<typeof sessionSchema>;
export type MessagesPage = z.infer<typeof messagesPageSchema>;
export type CancelResult = z.infer<typeof cancelResultSchema>;
