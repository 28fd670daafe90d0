/**
 * Plans and their limits (docs/contract.md#limits-and-plans). The operator may replace or add
 * plans with a JSON file (`--plans FILE`, env `SVC_PLANS_FILE`):
 *
 * ```json
 * { "free": { "requestsPerMinute": 100, "projectCreationsPerHour": 10, "maxProjects": 100, "maxQueuedWorkflows": 10 },
 *   "team": { "requestsPerMinute": 1000, "projectCreationsPerHour": 100, "maxProjects": 5000 } }
 * ```
 */
import { z } from 'zod';
import { readJsonConfig } from '../config-file.js';

/** The limits of one plan. Counts are whole numbers; windows are fixed by the field name. */
export interface PlanLimits {
  /** Authenticated JSON-RPC requests per API key per minute. */
  requestsPerMinute: number;
  /** `svc_create_project` successes per user in any sliding hour. */
  projectCreationsPerHour: number;
  /** Projects a user may own at once. */
  maxProjects: number;
  /** Bytes of published previews and deployments a user may keep, in MiB (default 1024). */
  artifactStorageMb?: number;
  /**
   * Workflows of a user that run at once, server-wide (`running` or `cancelling`; waiting for an
   * answer does not count). More stay queued, or waiting once answered, until one ends (default 2).
   */
  maxRunningWorkflows?: number;
  /**
   * Workflows a user may have queued (not yet started) over all their projects. A send past it
   * is refused: -32005 with `data.scope = "queued_workflows"` (default 20).
   */
  maxQueuedWorkflows?: number;
}

/** Default of `maxRunningWorkflows` for a plan that does not set it. */
const DEFAULT_MAX_RUNNING_WORKFLOWS = 2;
/** Default of `maxQueuedWorkflows` for a plan that does not set it. */
const DEFAULT_MAX_QUEUED_WORKFLOWS = 20;

/** A plan's bounds on one user's workflows, defaults applied (whole numbers, at least 1). */
export function workflowBounds(limits: PlanLimits): { maxRunning: number; maxQueued: number } {
  return {
    maxRunning: limits.maxRunningWorkflows ?? DEFAULT_MAX_RUNNING_WORKFLOWS,
    maxQueued: limits.maxQueuedWorkflows ?? DEFAULT_MAX_QUEUED_WORKFLOWS,
  };
}

/** Plans by name (`free`, `pro`, or the operator's). */
export type PlanTable = Record<string, PlanLimits>;

/** The spec's free tier, plus a larger `pro` plan an operator can hand out as it is. */
export const DEFAULT_PLANS: PlanTable = {
  free: {
    requestsPerMinute: 100,
    projectCreationsPerHour: 10,
    maxProjects: 100,
    artifactStorageMb: 1024,
    maxRunningWorkflows: 2,
    maxQueuedWorkflows: 20,
  },
  pro: {
    requestsPerMinute: 1000,
    projectCreationsPerHour: 100,
    maxProjects: 1000,
    artifactStorageMb: 10240,
    maxRunningWorkflows: 8,
    maxQueuedWorkflows: 200,
  },
};

const planSchema = z.strictObject({
  requestsPerMinute: z.number().int().positive(),
  projectCreationsPerHour: z.number().int().positive(),
  maxProjects: z.number().int().positive(),
  artifactStorageMb: z.number().int().positive(),
  maxRunningWorkflows: z.number().int().positive(),
  maxQueuedWorkflows: z.number().int().positive(),
});
const planFileSchema = z.record(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/), planSchema.partial());

/**
 * The plan table: defaults, overlaid by the operator's JSON file when given (a plan named in
 * the file takes its missing fields from the default plan of that name, else from `free`).
 * @throws Error naming the file and the problem when it is unreadable or invalid.
 */
export function loadPlans(file?: string): PlanTable {
  const plans: PlanTable = structuredClone(DEFAULT_PLANS);
  if (!file) return plans;
  for (const [name, limits] of Object.entries(readJsonConfig(file, planFileSchema, 'plans file'))) {
    plans[name] = { ...(plans[name] ?? DEFAULT_PLANS.free!), ...limits } as PlanLimits;
  }
  return plans;
}

/** The limits of `plan`; an unknown plan name gets the `free` plan's limits. */
export function limitsFor(plans: PlanTable, plan: string): PlanLimits {
  return plans[plan] ?? plans.free ?? DEFAULT_PLANS.free!;
}
