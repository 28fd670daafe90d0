/**
 * The project's deploy history as `svc_get_session` shows it (docs/releases.md "History"): its
 * last `DEPLOYMENT_HISTORY_LIMIT` releases, newest first, each with the state the release rules
 * give it (`deploymentStates` in core/releases.ts).
 */
import { DEPLOYMENT_HISTORY_LIMIT, deploymentStates } from '../core/releases.js';
import type { ReleaseRepo } from '../store/release-repo.js';
import type { DeploymentView } from './resource-shapes.js';

/** The project's `deployments` (one read of its newest releases). @throws the store's error. */
export async function deploymentsOf(
  releases: Pick<ReleaseRepo, 'recent'>,
  projectId: string,
): Promise<DeploymentView[]> {
  const rows = await releases.recent(projectId, DEPLOYMENT_HISTORY_LIMIT);
  const states = deploymentStates(rows);
  return rows.map((row) => ({
    number: row.number,
    channel: row.channel,
    rolloutPercent: row.rolloutPercent,
    createdAt: row.createdAt,
    platforms: JSON.parse(row.platforms) as DeploymentView['platforms'],
    sdks: JSON.parse(row.sdks) as number[],
    workflowId: row.workflowId,
    state: states.get(row.number)!,
    ...(row.rollbackOf !== null && { rollbackOf: row.rollbackOf }),
  }));
}
