/**
 * The release side of publishing a deployment (docs/releases.md): the first deployment a deploy or
 * rollback workflow publishes fixes its release (deploy number, the channel's previous deploy,
 * the app's source files and the changes since that deploy); every deployment adds its platform
 * and Expo SDKs. A workflow sent without a release (before releases existed) gets the default one:
 * the production channel at 100 %.
 */
import type { PublishRequest } from '../builders/builder.js';
import { updateSdksIn } from '../builders/update-description.js';
import { DEFAULT_CHANNEL, latestUpdatePathOf, ROLLOUT_MAX } from '../core/releases.js';
import {
  describeChanges,
  packSourceFiles,
  readSourceFiles,
  sourceChanges,
  unpackSourceFiles,
  type FileChange,
} from '../io/source-snapshot.js';
import type { Repos } from '../store/repos.js';
import type { ArtifactRow, ReleaseRow, WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';

/** What the first deployment of a workflow fixes, computed before its publish transaction. */
interface FirstPublication {
  source: Buffer;
  previousNumber: number | null;
  changes: FileChange[] | null;
}

/** One deployment about to be published by workflow `workflow`. */
export class ReleasePublication {
  private first: FirstPublication | null = null;
  private number: number | null = null;

  private constructor(
    private readonly workflow: WorkflowRow,
    private readonly release: ReleaseRow,
    private readonly sdks: number[],
  ) {}

  /**
   * Before the publish transaction: reads the workflow's release (the default one when it has
   * none), and for its first deployment the app's source (`workspaceDir`; a rollback's is its
   * target's) and the changes since the channel's previous deploy. The source is kept with every
   * value `redact` replaces (the project's secrets) replaced: the deploy's page shows its diff.
   */
  static async prepare(
    repos: Pick<Repos, 'releases'>,
    workflow: WorkflowRow,
    workspaceDir: string,
    request: PublishRequest,
    redact: (text: string) => string,
  ): Promise<ReleasePublication> {
    const release = (await repos.releases.byWorkflow(workflow.id)) ?? newRelease(workflow);
    const target =
      release.rollbackOf === null ? undefined : await repos.releases.byNumber(workflow.projectId, release.rollbackOf);
    const sdks =
      'sourceDir' in request && request.platform !== 'web'
        ? await updateSdksIn(request.sourceDir)
        : request.platform !== 'web' && target
          ? (JSON.parse(target.sdks) as number[])
          : [];
    const publication = new ReleasePublication(workflow, release, sdks);
    if (release.number !== null) return publication;
    const files = target
      ? unpackSourceFiles(target.source)
      : Object.fromEntries(Object.entries(await readSourceFiles(workspaceDir)).map(([f, text]) => [f, redact(text)]));
    const [previous] = await repos.releases.onChannel(workflow.projectId, release.channel, 1);
    const before = previous ? await repos.releases.byNumber(workflow.projectId, previous.number) : undefined;
    publication.first = {
      source: packSourceFiles(files),
      previousNumber: previous?.number ?? null,
      // A deploy made before releases existed has no source to compare with.
      changes: before?.source ? sourceChanges(unpackSourceFiles(before.source), files) : null,
    };
    return publication;
  }

  /** Inside the publish transaction, after the artifact row `row` is inserted: writes the release. */
  async record(tx: Tx, row: ArtifactRow): Promise<void> {
    const { releases } = tx;
    if (!(await releases.byWorkflow(this.workflow.id))) await releases.insert(this.release);
    const current = (await releases.byWorkflow(this.workflow.id))!;
    const platforms = union(JSON.parse(current.platforms) as string[], [row.platform]);
    const sdks = union(JSON.parse(current.sdks) as number[], this.sdks);
    this.number = row.number;
    const first = current.number === null ? this.first : null;
    await releases.update(this.workflow.id, {
      platforms: JSON.stringify(platforms),
      sdks: JSON.stringify(sdks),
      ...(first && {
        number: row.number,
        previousNumber: first.previousNumber,
        changes: first.changes ? JSON.stringify(first.changes) : null,
        source: first.source,
        createdAt: row.createdAt,
        // The first deploy of a channel has no earlier update to keep: it goes to every phone.
        ...(first.previousNumber === null && { rolloutPercent: ROLLOUT_MAX }),
      }),
    });
    if (!first) this.first = null;
  }

  /** True after `record` fixed the release (the workflow's first deployment): `note` tells it. */
  get announces(): boolean {
    return this.first !== null && this.number !== null;
  }

  /**
   * The result message of the workflow's first deployment, after its commit (see `announces`): the deploy's number, channel and rollout, the files changed since the channel's previous
   * deploy, and the channel's latest update URL path (private: `token` is the project's).
   */
  note(token: string): string {
    const { channel, rolloutPercent, rollbackOf } = this.release;
    const { previousNumber, changes } = this.first!;
    const what =
      rollbackOf !== null
        ? `Deploy #${this.number}: the rollback of channel "${channel}" to deploy #${rollbackOf} (its bundles published again, to every phone of the channel; any rollout there ended).`
        : rolloutPercent < ROLLOUT_MAX && previousNumber !== null
          ? `Deploy #${this.number} on channel "${channel}", rolling out to ${rolloutPercent} % of its phones (chosen by their eas-client-id; the others, and phones that send no id, keep the channel's previous update).`
          : `Deploy #${this.number} on channel "${channel}", to every phone of the channel${rolloutPercent < ROLLOUT_MAX ? ` (not ${rolloutPercent} %: the channel has no earlier update for the other phones)` : ''}.`;
    const changed =
      previousNumber === null
        ? ` The first deploy of channel "${channel}": nothing to compare with.`
        : changes === null
          ? ` Deploy #${previousNumber} has no record of its files (it was made by an earlier version): no changes to name.`
          : changes.length > 0
            ? ` Changed since deploy #${previousNumber}: ${describeChanges(changes)}.`
            : ` No source file changed since deploy #${previousNumber}.`;
    return `${what}${changed} The channel's "latest" update URL path (keep it private): ${latestUpdatePathOf(token, channel)}`;
  }
}

/**
 * A workflow's release as it is sent, before it publishes (no number, no source): on `channel` at
 * `rolloutPercent`, republishing deploy `rollbackOf` for a rollback. Defaults: production, 100 %.
 */
export function newRelease(
  workflow: Pick<WorkflowRow, 'id' | 'projectId' | 'createdAt'>,
  { channel = DEFAULT_CHANNEL, rolloutPercent = ROLLOUT_MAX, rollbackOf = null }: Partial<ReleaseRow> = {},
): ReleaseRow {
  return {
    workflowId: workflow.id,
    projectId: workflow.projectId,
    channel,
    rolloutPercent,
    rollbackOf,
    number: null,
    previousNumber: null,
    platforms: '[]',
    sdks: '[]',
    changes: null,
    source: null,
    createdAt: workflow.createdAt,
  };
}

function union<T>(a: readonly T[], b: readonly T[]): T[] {
  return [...new Set([...a, ...b])];
}
