/**
 * What the artifact routes may read (docs/builders.md "Previews and deployments", "Expo updates"): published
 * artifacts by id, the newest deployment of a project, their files, resolved safely (fetched from
 * the store first on a node without a copy), and the project of a "latest" update token. The
 * routes get this instead of the repositories, so serving a file never reaches any other table.
 */
import type { DeploymentRelease } from '../builders/builder-module.js';
import { channelHeads, inRollout } from '../core/releases.js';
import { sourcePatch, unpackSourceFiles, type FileChange } from '../io/source-snapshot.js';
import type { ArtifactRepo, UpdateChannelRepo } from '../store/repos.js';
import type { ReleaseRepo } from '../store/release-repo.js';

/**
 * How many of a channel's newest releases are read to find what it serves: its serving deploy is
 * among them unless that many staged rollouts followed it, each superseding the one before.
 */
const CHANNEL_WINDOW = 50;
import { UPDATE_CHANNEL_TOKEN } from '../store/update-channel-token.js';
import type { ArtifactRow } from '../store/rows.js';
import type { ArtifactStore } from '../workflows/artifact-store.js';

/** A published artifact as the routes see it. */
export type PublishedArtifactRow = Readonly<ArtifactRow>;

/** Read-only access to published artifacts and their files. */
export class ArtifactReader {
  constructor(
    private readonly artifacts: ArtifactRepo,
    private readonly files: ArtifactStore,
    private readonly channels: Pick<UpdateChannelRepo, 'projectOf'>,
    private readonly releases: Pick<ReleaseRepo, 'onChannel' | 'byWorkflow' | 'byNumber'>,
  ) {}

  /** The artifact with id `id`, or undefined. */
  find(id: string): Promise<PublishedArtifactRow | undefined> {
    return this.artifacts.findById(id);
  }

  /**
   * The deployment for `platform` that a phone of `channel` gets (docs/releases.md "What a phone
   * gets"): the channel's rollout when the phone's bucket (`eas-client-id`, null when it sent
   * none) is in it, else the channel's serving deploy; undefined when the channel has neither
   * for `platform`.
   */
  async channelDeployment(
    projectId: string,
    channel: string,
    platform: ArtifactRow['platform'],
    clientId: string | null,
  ): Promise<PublishedArtifactRow | undefined> {
    const { serving, rollingOut } = channelHeads(await this.releases.onChannel(projectId, channel, CHANNEL_WINDOW));
    const chosen =
      rollingOut && (!serving || inRollout(channel, clientId, rollingOut.rolloutPercent)) ? rollingOut : serving;
    const deploymentOf = async (workflowId: string | undefined) =>
      workflowId === undefined
        ? undefined
        : (await this.artifacts.listByWorkflow(workflowId)).find(
            (a) => a.kind === 'deployment' && a.platform === platform,
          );
    // A rollout that did not publish this platform leaves its phones on the serving deploy.
    return (await deploymentOf(chosen?.workflowId)) ?? (await deploymentOf(serving?.workflowId));
  }

  /** The deployment for `platform` published by the same workflow as `artifact` (ios and android go together). */
  async sibling(
    artifact: PublishedArtifactRow,
    platform: ArtifactRow['platform'],
  ): Promise<PublishedArtifactRow | undefined> {
    if (!artifact.workflowId) return undefined;
    return (await this.artifacts.listByWorkflow(artifact.workflowId)).find(
      (a) => a.kind === artifact.kind && a.platform === platform,
    );
  }

  /**
   * The release of deployment `artifact` as its page shows it: channel, rollout, the channel's
   * previous deploy, the files changed since then and their unified diff; undefined when it has
   * none (docs/releases.md "Changes").
   */
  async releaseOf(artifact: PublishedArtifactRow): Promise<DeploymentRelease | undefined> {
    const release = artifact.workflowId ? await this.releases.byWorkflow(artifact.workflowId) : undefined;
    if (release?.number == null) return undefined;
    const before =
      release.previousNumber === null
        ? undefined
        : await this.releases.byNumber(artifact.projectId, release.previousNumber);
    const from = unpackSourceFiles(before?.source ?? null);
    const to = unpackSourceFiles(release.source);
    return {
      number: release.number,
      channel: release.channel,
      rolloutPercent: release.rolloutPercent,
      previousNumber: release.previousNumber,
      changes: release.changes ? (JSON.parse(release.changes) as FileChange[]) : [],
      patch: release.changes && before?.source ? sourcePatch(from, to) : '',
    };
  }

  /** The project whose "latest" update token this is, or null (a malformed token never reaches the store). */
  async projectOfUpdateChannel(token: string): Promise<string | null> {
    return UPDATE_CHANNEL_TOKEN.test(token) ? this.channels.projectOf(token) : null;
  }

  /**
   * The file to serve for `subPath` inside artifact `id`, or null when it leaves the artifact's
   * folder (before or after resolving links) or names nothing; a folder maps to its `index.html`.
   */
  resolveFile(id: string, subPath: string): Promise<string | null> {
    return this.files.resolveFile(id, subPath);
  }
}
