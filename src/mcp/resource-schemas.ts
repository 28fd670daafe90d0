/**
 * Output shapes of the resources tools return (spec section 2, design section 4), as zod, so that
 * each tool's `outputSchema` is generated from the same definition that documents it.
 */
import { z } from 'zod';
import { WORKFLOW_STATUSES } from '../workflows/workflow-states.js';

const timestamp = z.string().describe('ISO 8601 UTC timestamp with milliseconds');

/** Project (spec section 2). */
export const projectSchema = z.object({
  id: z.string().describe('Project UUID'),
  name: z.string(),
  description: z.string().nullable().describe('null when none was set'),
  visibility: z.enum(['public', 'private']),
  createdAt: timestamp,
  updatedAt: timestamp.describe('ISO 8601 timestamp of the last update (moves when a workflow completes)'),
});

/** A preview or deployment URL (design section 4). */
export const previewUrlSchema = z.object({
  url: z.string().describe('Absolute URL to open in a browser'),
  platform: z.enum(['web', 'ios', 'android']),
  kind: z.enum(['preview', 'deployment']),
  workflowId: z.string().nullable(),
  createdAt: timestamp,
});

/** A workflow as `svc_get_session` shows it (design section 4). */
export const workflowSchema = z.object({
  id: z.string(),
  kind: z.enum(['build', 'deploy']),
  status: z.enum(WORKFLOW_STATUSES),
  step: z.object({ index: z.number().int(), total: z.number().int(), name: z.string().nullable() }),
  createdAt: timestamp,
  startedAt: timestamp.nullable(),
  finishedAt: timestamp.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  previewUrls: z.array(previewUrlSchema),
});

/** The question the agent waits on (design section 4). */
export const pendingQuestionSchema = z.object({
  questionId: z.string(),
  workflowId: z.string(),
  prompt: z.string(),
  options: z.array(z.string()).optional(),
  pattern: z.string().optional(),
  askedAt: timestamp,
});

/** One conversation message (design section 4). */
export const messageSchema = z.object({
  id: z.string(),
  seq: z.number().int().describe('Position in the project conversation; pass as `after` to read on'),
  role: z.enum(['user', 'agent', 'system']),
  type: z.enum(['instruction', 'answer', 'question', 'progress', 'result', 'error', 'status']),
  content: z.string(),
  workflowId: z.string().nullable(),
  createdAt: timestamp,
});
