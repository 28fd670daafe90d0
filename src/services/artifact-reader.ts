/**
 * What the artifact routes may read (docs/builders.md "Previews and deployments", "Expo updates"): published
 * artifacts by id, the newest deployment of a project, their files, resolved safely (fetched from
 * the store first on a node without a copy), and the project of a "latest" update token. The
 * routes get this instead of the repositories, so serving a file never reaches any other table.
 */
import type { ArtifactRepo, UpdateChannelRepo } from '../store/repos.js';
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
  ) {}

  /** The artifact with id `id`, or undefined. */
  find(id: string): Promise<PublishedArtifactRow | undefined> {
    return this.artifacts.findById(id);
  }

  /** The project's newest deployment for `platform`, or undefined. */
  latestDeployment(projectId: string, platform: ArtifactRow['platform']): Promise<PublishedArtifactRow | undefined> {
    return this.artifacts.latest(projectId, 'deployment', platform);
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
