/**
 * The port of the releases table (docs/releases.md), one of the store's repositories (`repos.ts`).
 */
import type { PublishedRelease, ReleaseRow } from './rows.js';

/**
 * The releases of deploy and rollback workflows (docs/releases.md): written when the workflow is
 * sent and when it publishes its first deployment; read by the session's history and by the
 * update routes, which pick what a channel serves.
 */
export interface ReleaseRepo {
  /** Records a workflow's release when it is sent (number null). */
  insert(row: ReleaseRow): Promise<void>;
  /** The release of workflow `workflowId`, with its source, or undefined. */
  byWorkflow(workflowId: string): Promise<ReleaseRow | undefined>;
  /** The project's published release with deploy number `number`, with its source, or undefined. */
  byNumber(projectId: string, number: number): Promise<ReleaseRow | undefined>;
  /** The project's newest `limit` published releases, newest first, without their source. */
  recent(projectId: string, limit: number): Promise<PublishedRelease[]>;
  /** The newest `limit` published releases of the project's `channel`, newest first, without their source. */
  onChannel(projectId: string, channel: string, limit: number): Promise<PublishedRelease[]>;
  /** Every deploy number of the project that has a release, ascending. */
  numbers(projectId: string): Promise<number[]>;
  /**
   * Writes what the first published deployment of workflow `workflowId` fixes (`number`,
   * `previousNumber`, `changes`, `source`, `createdAt`; `rolloutPercent` raised to 100 for a
   * channel's first deploy) or adds (`platforms`, `sdks`).
   */
  update(
    workflowId: string,
    patch: Partial<
      Pick<
        ReleaseRow,
        'number' | 'previousNumber' | 'rolloutPercent' | 'platforms' | 'sdks' | 'changes' | 'source' | 'createdAt'
      >
    >,
  ): Promise<void>;
}
