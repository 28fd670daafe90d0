/**
 * The bookkeeping of a build that does not feed its web export, run beside it rather than after it
 * (docs/performance.md "Round three"): the commit of the build's files is prepared (`git add -A`,
 * the commit object, the history's length, the tracked files: one git process) and the
 * checkpoint's zip packed while the export runs, and copied into the artifact store while the
 * preview is published. Only once the export passed and the preview is published does the commit
 * become HEAD, and only then is the checkpoint recorded, so a failed, cancelled or refused build
 * still resets the workspace to its last good commit and records nothing more than before.
 */
import type { BuildContext, PublishedArtifact } from '../builder.js';
import type { ExpoToolchain } from './toolchain.js';
import { packCheckpoint } from './checkpoint.js';
import type { ExpoWorkspace, StagedCommit } from './workspace.js';

/** What was ready once the export ended: the staged commit (or why staging failed) and the packed checkpoint. */
type Ready = { staged: StagedCommit; checkpointDir: string | null } | { failure: unknown };

/** One build's bookkeeping beside its export (see the file comment). */
export class BesideExport {
  private constructor(
    private readonly workspace: ExpoWorkspace,
    private readonly message: string,
    private readonly ready: Promise<Ready>,
  ) {}

  /**
   * Starts staging the commit (message `message`) and, with `checkpoint`, packing the checkpoint
   * of the app `appName` from the staged files. Call it once the build's files are final (after
   * the agent and the identity sync): the export writes only ignored output, which `finish` checks.
   */
  static start(
    workspace: ExpoWorkspace,
    message: string,
    checkpoint: { toolchain: ExpoToolchain; appName: string } | null,
  ): BesideExport {
    const ready = (async (): Promise<Ready> => {
      const staged = await workspace.stage(message);
      // A pack that fails here is packed again at the checkpoint, failing where it always did.
      const checkpointDir = checkpoint
        ? await packCheckpoint(workspace, checkpoint.toolchain, checkpoint.appName, staged.files).catch(() => null)
        : null;
      return { staged, checkpointDir };
    })().catch((failure: unknown) => ({ failure }));
    return new BesideExport(workspace, message, ready);
  }

  /** Settles once the git process and the packing ended, whatever they did (before any reset of the workspace). */
  async settled(): Promise<void> {
    await this.ready;
  }

  /**
   * After the export: publishes the preview (`publishPreview`), makes the staged commit HEAD
   * (`advance`, and `pruneHistory`) and posts the build's result (`announce`). Meanwhile a
   * build's packed checkpoint is copied into the artifact store; its row is recorded only once all
   * of that succeeded, so the artifacts and messages come in the order they always did. When a
   * file changed since staging, commits as a build always did, and the checkpoint is left to be
   * packed and published afresh.
   * @returns the checkpoint's publication (its refusals are the caller's to say), or null when
   *   the caller must pack and publish it.
   * @throws what `publishPreview` or `announce` throw, BuildFailure `workspace_failed` when git
   *   fails (also when staging failed); nothing of the checkpoint is then recorded.
   */
  async finish(
    context: BuildContext,
    publishPreview: () => Promise<PublishedArtifact>,
    announce: (preview: PublishedArtifact) => Promise<void>,
  ): Promise<{ checkpoint: Promise<PublishedArtifact> | null }> {
    const ready = await this.ready;
    let open = (): void => undefined;
    let close: (reason: unknown) => void = () => undefined;
    const gate = new Promise<void>((resolve, reject) => ((open = resolve), (close = reject)));
    gate.catch(() => undefined);
    const dir = 'failure' in ready ? null : ready.checkpointDir;
    const checkpoint = dir
      ? context.publish({ kind: 'export', platform: 'web', sourceDir: dir, recordAfter: gate })
      : null;
    checkpoint?.catch(() => undefined); // awaited by the caller, or below
    try {
      const preview = await publishPreview();
      if ('failure' in ready) throw ready.failure;
      const advanced = await this.workspace.advance(ready.staged);
      if (advanced) await this.workspace.pruneHistory({ known: ready.staged.count });
      else {
        await this.workspace.commit(this.message);
        await this.workspace.pruneHistory();
      }
      await announce(preview);
      if (!advanced) throw STALE;
      open();
      return { checkpoint };
    } catch (error) {
      close(error);
      await checkpoint?.catch(() => undefined);
      if (error === STALE) return { checkpoint: null };
      throw error;
    }
  }
}

/** Why a checkpoint packed beside the export is not recorded: a file changed since it was packed. */
const STALE = new Error('The app changed since its checkpoint was packed.');
