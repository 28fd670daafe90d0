/**
 * Project management (docs/contract.md#tools, docs/contract.md#limits-and-plans; docs/contract.md#tools, docs/contract.md#limits-and-plans): listing, reading and
 * creating projects, with the hourly creation limit and the per-plan project cap checked in the
 * same write transaction as the insert, so that concurrent creations can never exceed them.
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import type { Clock } from '../clock.js';
import { forbidden, rateLimited } from '../errors.js';
import { limitsFor, type PlanTable } from '../limits/plans.js';
import type { Store } from '../store/store.js';
import type { ProjectRow } from '../store/rows.js';
import type { Project } from './resource-shapes.js';
import type { ProjectAccess } from './project-access.js';

/** Validated `svc_create_project` arguments. */
export interface CreateProjectInput {
  name: string;
  description?: string | null | undefined;
  visibility?: 'public' | 'private' | undefined;
}

const HOUR_MS = 3_600_000;

/** The public shape of a stored project (never exposes the owner). */
function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Lists, reads and creates projects (docs/contract.md#tools). */
export class ProjectService {
  constructor(
    private readonly store: Store,
    private readonly access: ProjectAccess,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
  ) {}

  /** True when `caller` may answer the project's questions: its owner, with a token that may write. */
  async mayAnswer(caller: Caller, projectId: string): Promise<boolean> {
    if (caller.readOnly) return false;
    const project = await this.store.repos.projects.findById(projectId);
    return project?.ownerId === caller.userId;
  }

  /** The caller's own projects, public and private, newest first. */
  async list(caller: Caller): Promise<Project[]> {
    return (await this.store.repos.projects.listByOwner(caller.userId)).map(toProject);
  }

  /** @throws ServiceError -32004 unknown, -32003 another user's private project. */
  async get(caller: Caller, projectId: string): Promise<Project> {
    return toProject(await this.access.readable(caller, projectId));
  }

  /**
   * Creates a project owned by the caller. Input is already validated (lengths, enum, blank name).
   * @throws ServiceError -32003 with `data.reason = "project_limit_reached"` at the plan's cap;
   *   -32005 with `data.scope = "project_creation"` past the hourly creation limit. Nothing is
   *   stored in either case.
   */
  async create(caller: Caller, input: CreateProjectInput): Promise<Project> {
    const limits = limitsFor(this.plans, caller.plan);
    return this.store.transaction(async (tx) => {
      // Counted under the owner's lock: concurrent creations cannot pass the cap or the hourly limit.
      await tx.lock('users', caller.userId);
      const now = this.clock();
      const owned = await tx.projects.countByOwner(caller.userId);
      if (owned >= limits.maxProjects) {
        throw forbidden({ reason: 'project_limit_reached', limit: limits.maxProjects, plan: caller.plan });
      }
      const recent = await tx.projects.createdSince(caller.userId, new Date(now.getTime() - HOUR_MS).toISOString());
      if (recent.n >= limits.projectCreationsPerHour) {
        const resetMs = recent.oldest ? Date.parse(recent.oldest) + HOUR_MS : now.getTime() + HOUR_MS;
        throw rateLimited({
          scope: 'project_creation',
          limit: limits.projectCreationsPerHour,
          windowSeconds: 3600,
          resetAt: Math.ceil(resetMs / 1000),
          retryAfterSeconds: Math.max(1, Math.ceil((resetMs - now.getTime()) / 1000)),
        });
      }
      const at = now.toISOString();
      const row: ProjectRow = {
        id: randomUUID(),
        ownerId: caller.userId,
        name: input.name,
        description: input.description ?? null,
        visibility: input.visibility ?? 'private',
        createdAt: at,
        updatedAt: at,
        messageSeq: 0,
        deploymentSeq: 0,
        workspaceVersion: 0,
      };
      await tx.projects.insert(row);
      return toProject(row);
    });
  }
}
