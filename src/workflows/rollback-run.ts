/**
 * A rollback workflow (docs/releases.md "Rollback"): publishes the deployments of its target
 * deploy again, as a new deploy number on the target's channel at 100 %. It runs in the engine,
 * whatever the builder: the target's files are copied as they were published (an external URL is
 * recorded again), so nothing is built.
 */
import { BuildFailure, type BuildContext } from '../builders/builder.js';
import type { Repos } from '../store/repos.js';
import type { WorkflowRow } from '../store/rows.js';

/**
 * Runs rollback workflow `row` through `context` (its steps, publications and messages).
 * @throws BuildFailure `invalid_rollback` when its release or its target's deployments are gone;
 *   what `context` throws (cancel, lease lost, quota).
 */
export async function runRollback(
  repos: Pick<Repos, 'releases' | 'artifacts'>,
  row: WorkflowRow,
  context: BuildContext,
): Promise<void> {
  const release = await repos.releases.byWorkflow(row.id);
  const target =
    release?.rollbackOf != null ? await repos.releases.byNumber(row.projectId, release.rollbackOf) : undefined;
  const deployments = target
    ? (await repos.artifacts.listByWorkflow(target.workflowId)).filter((a) => a.kind === 'deployment')
    : [];
  if (!release || !target || deployments.length === 0)
    throw new BuildFailure('invalid_rollback', 'The deploy to roll back to has no deployments left to publish.');
  await context.step(1, 2, `Publishing deploy #${target.number}'s bundles again on channel "${release.channel}"`);
  const published: string[] = [];
  for (const deployment of deployments) {
    const artifact = await context.publish(
      deployment.externalUrl
        ? { kind: 'deployment', platform: deployment.platform, externalUrl: deployment.externalUrl }
        : { kind: 'deployment', platform: deployment.platform, fromArtifactId: deployment.id },
    );
    published.push(`${artifact.platform} at ${artifact.path ?? artifact.externalUrl}`);
  }
  await context.step(2, 2, 'Rolled back');
  await context.say(
    `Rolled back channel "${release.channel}" to deploy #${target.number}: its bundles are published again as ${published.join('; ')}. Every phone of the channel gets them from its next check for updates.`,
    'result',
  );
}
