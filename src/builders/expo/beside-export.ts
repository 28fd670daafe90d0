/**
 * The bookkeeping of a build that does not feed its web export, run beside it rather than after it
 * (docs/performance.md "Goal 3.5"): the commit of the build's files is prepared (`git add -A`,
 * the commit object, the history's length, the tracked files: one git process) and the
 * checkpoint's zip packed while the export runs. Only once the export passed and the preview is
 * published does the commit become HEAD, so a failed, cancelled or refused build still resets the
 * workspace to its last good commit, and a build that published nothing commits nothing.
 */
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
   * After the export and the preview: makes the staged commit HEAD and folds old history
   * (`pruneHistory`). When a file changed since staging, commits as a build always did and
   * leaves the checkpoint to be packed again.
   * @returns the packed checkpoint's folder, or null when it must be packed again.
   * @throws BuildFailure `workspace_failed` when git fails (also when staging failed).
   */
  async finish(): Promise<string | null> {
    const ready = await this.ready;
    if ('failure' in ready) throw ready.failure;
    if (await this.workspace.advance(ready.staged)) {
      await this.workspace.pruneHistory(undefined, ready.staged.count);
      return ready.checkpointDir;
    }
    await this.workspace.commit(this.message);
    await this.workspace.pruneHistory();
    return null;
  }
}
