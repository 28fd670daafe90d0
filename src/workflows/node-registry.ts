/**
 * One builder per deployment (docs/operators.md "One builder per deployment"). Every node writes
 * a row in the store's `nodes` table at start (its runner id, role, builder and whether it claims
 * workflows), writes it again every `NODE_REFRESH_MS`, and deletes it when it drains or stops. From these rows:
 *
 * - a node whose builder differs from the other live nodes' says so at start (one warning naming
 *   both builders): a workflow records the builder of the node it was sent through, and a worker
 *   claims only workflows of its own builder, so such a mix leaves work unclaimed;
 * - `unserved()` counts the queued workflows of each builder that no live claiming node has, for
 *   `/metrics` (`mbm_workflows_without_worker`) and the session's `waitingFor`.
 *
 * A node that died without deleting its row counts as live until its row is `NODE_STALE_MS` old.
 */
import type { Logger } from '../logger.js';
import type { Repos } from '../store/repos.js';
import type { NodeRow } from '../store/rows.js';
import type { Store } from '../store/store.js';

/** How often a node writes its row again, in ms. */
const NODE_REFRESH_MS = 15_000;
/** A row not written for this long is a dead node's, in ms. */
const NODE_STALE_MS = 3 * NODE_REFRESH_MS;

/** Who this node is, as its row says. */
export interface NodeIdentity {
  runnerId: string;
  role: string;
  builder: string;
  claims: boolean;
}

/** The node's row in the store, and what the other rows say (see the file comment). */
export class NodeRegistry {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<Store, 'repos' | 'clockOffsetMs'>,
    private readonly self: NodeIdentity,
    private readonly logger: Logger,
  ) {}

  /** Writes this node's row, warns when other live nodes use another builder, and keeps the row fresh. */
  async start(): Promise<void> {
    await this.write();
    const others = (await this.live()).filter(
      (n) => n.runnerId !== this.self.runnerId && n.builder !== this.self.builder,
    );
    if (others.length > 0) {
      const theirs = [...new Set(others.map((n) => n.builder))];
      this.logger.warn(
        { builder: this.self.builder, otherBuilders: theirs, otherNodes: others.map((n) => `${n.role} ${n.runnerId}`) },
        `this node's builder is "${this.self.builder}" but other nodes on this store use "${theirs.join('", "')}": a workflow runs only on a worker with the builder of the node it was sent through, so run one builder per deployment (docs/operators.md)`,
      );
    }
    this.timer = setInterval(
      () =>
        void this.write().catch((error: unknown) =>
          this.logger.warn({ err: error }, 'could not refresh this node in the nodes table'),
        ),
      NODE_REFRESH_MS,
    );
    this.timer.unref();
  }

  /** Stops the refresh and deletes this node's row (a failure is logged: the row then goes stale). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.store.repos.nodes
      .remove(this.self.runnerId)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not remove this node from the nodes table'));
  }

  /**
   * Queued workflows per builder that no live claiming node serves (none: an empty map). A
   * workflow recorded with no builder is served by any claiming node.
   */
  async unserved(): Promise<Map<string, number>> {
    const served = new Set((await this.live()).filter((n) => n.claims).map((n) => n.builder));
    const unserved = new Map<string, number>();
    for (const [builder, n] of await this.store.repos.workflows.countQueuedByBuilder()) {
      const nobody = builder === null ? served.size === 0 : !served.has(builder);
      if (nobody && n > 0) unserved.set(builder ?? 'any', n);
    }
    return unserved;
  }

  /**
   * Whether a live claiming node has `builder`.
   * @param repos where to read: a transaction's repositories inside one (default: the store's).
   */
  async serves(builder: string, repos: Pick<Repos, 'nodes'> = this.store.repos): Promise<boolean> {
    return (await this.live(repos)).some((n) => n.claims && n.builder === builder);
  }

  /**
   * What a queued workflow waits for when no live claiming node has its builder
   * (`waiting for a worker with the expo builder`); undefined when one has (or it records none).
   * @param repos where to read: a transaction's repositories inside one (default: the store's).
   */
  async waitingFor(
    workflow: { builder?: string | null },
    repos: Pick<Repos, 'nodes'> = this.store.repos,
  ): Promise<string | undefined> {
    if (!workflow.builder || (await this.serves(workflow.builder, repos))) return undefined;
    return waitingForWorker(workflow.builder);
  }

  private now(): number {
    return Date.now() + this.store.clockOffsetMs();
  }

  private write(): Promise<void> {
    return this.store.repos.nodes.upsert({ ...this.self, seenAt: this.now() });
  }

  private live(repos: Pick<Repos, 'nodes'> = this.store.repos): Promise<NodeRow[]> {
    return repos.nodes.listSeenSince(this.now() - NODE_STALE_MS);
  }
}

/** The session's words for a queue no worker can start: `waiting for a worker with the expo builder`. */
function waitingForWorker(builder: string): string {
  return `waiting for a worker with the ${builder} builder`;
}
