/**
 * The session reader of `svc_get_session` (docs/contract.md#tools): the project's active, queued
 * and last workflows, its pending question and its preview URLs, served from the session cache
 * while nothing it shows has changed (docs/architecture.md "The session cache").
 */
import type { Caller } from '../auth/caller.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { NodeRegistry } from '../workflows/node-registry.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';
import { CHECKPOINTS_SHOWN, type SessionView } from './resource-shapes.js';
import { listCheckpoints } from '../workflows/checkpoints.js';
import { SessionCache } from './session-cache.js';
import { deploymentsOf } from './release-history.js';
import { toCheckpointView, toPendingQuestion, toPreviewUrl, workflowView, workflowViewOf } from './workflow-views.js';

/** What the reader needs: the store, the read access rule, the public URLs and the nodes. */
export interface SessionReaderDeps {
  store: Pick<Store, 'repos' | 'rowGeneration'>;
  access: Pick<ProjectAccess, 'readable'>;
  publicUrl: Pick<PublicUrl, 'artifacts' | 'artifactBaseOf'>;
  /** The nodes serving the store: says when no worker serves the next queued workflow's builder (`node-registry.ts`). */
  nodes?: Pick<NodeRegistry, 'waitingFor'> | undefined;
}

/** Reads sessions, keeping the views last read per project (`session-cache.ts`). */
export class SessionReader {
  /** The session views last read, per project, while nothing they show has changed (`session-cache.ts`). */
  private readonly sessions = new SessionCache();

  constructor(private readonly deps: SessionReaderDeps) {}

  /**
   * The project's workflow status, pending question and preview URLs. While nothing the session
   * shows has changed since the last read (the store's `rowGeneration()`), that read's view is
   * returned again: frozen and shared, so callers must copy it to change it (`session-cache.ts`).
   * @throws -32004/-32003
   */
  async session(caller: Caller, projectId: string): Promise<SessionView> {
    await this.deps.access.readable(caller, projectId);
    const { store, publicUrl } = this.deps;
    // Taken before the reads: a write made while they run moves it, and their view is never served.
    const generation = store.rowGeneration();
    const base = publicUrl.artifacts();
    const cached = this.sessions.get(projectId, generation, base);
    if (cached) return cached;
    const view = await this.readSession(projectId);
    this.sessions.set(projectId, generation, base, view);
    return view;
  }

  /** The session read from the store. */
  private async readSession(projectId: string): Promise<SessionView> {
    const { workflows, questions, artifacts } = this.deps.store.repos;
    // Separate statements, which another node's commits may fall between: the queue is read before
    // the active workflow, so a queued workflow claimed meanwhile shows as active (never in neither),
    // and one that started between the two reads is listed once, as active.
    const queuedFirst = await workflows.listQueued(projectId);
    const active = await workflows.findActive(projectId);
    const queued = active ? queuedFirst.filter((w) => w.id !== active.id) : queuedFirst;
    const last = await workflows.latestFinished(projectId);
    const pending = active?.status === 'waiting_for_input' ? await questions.pendingOf(active.id) : undefined;
    const base = this.deps.publicUrl;
    return {
      projectId,
      hasActiveWorkflows: active !== undefined || queued.length > 0,
      activeWorkflow: active ? await workflowViewOf(artifacts, active, base) : null,
      // A queued workflow has never run (no transition leads back to `queued`, workflow-states.ts),
      // so it has published nothing: the queue is its one query, not one more per workflow.
      queuedWorkflows: queued.map((w) => workflowView(w, [])),
      pendingQuestion: pending ? toPendingQuestion(pending) : null,
      previewUrls: (await artifacts.latestPerPlatform(projectId)).map((a) => toPreviewUrl(a, base)),
      lastWorkflow: last ? await workflowViewOf(artifacts, last, base) : null,
      deployments: await deploymentsOf(this.deps.store.repos.releases, projectId),
      checkpoints: (await listCheckpoints(artifacts, projectId, CHECKPOINTS_SHOWN)).map((c) =>
        toCheckpointView(c, base),
      ),
      environment: (await this.deps.store.repos.projectEnv.list(projectId)).map((v) => ({
        name: v.name,
        secret: v.secret,
      })),
      ...(await this.waitingFor(queued[0])),
    };
  }

  /** The session's `waitingFor` when the next queued workflow's builder has no live worker. */
  private async waitingFor(next: WorkflowRow | undefined): Promise<{ waitingFor?: string }> {
    const waiting = next && (await this.deps.nodes?.waitingFor(next));
    return waiting ? { waitingFor: waiting } : {};
  }
}
