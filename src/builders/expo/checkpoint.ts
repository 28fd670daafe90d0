/**
 * Checkpoints of an Expo app (docs/builders.md "Checkpoints"): after every completed workflow the
 * app's files, as git tracks them in the workspace, are stored in `source.zip` (with fflate) and
 * published as the workflow's export; a restore unpacks one back into the workspace.
 *
 * The zip is the app alone, one folder named after the app's slug: no `node_modules`, no git, no
 * export output, and nothing of the service: the managed `metro.config.js` (the service's bundle
 * guard and cache location) is left out so Expo's default applies, and `app.json` loses the
 * constant base URL of previews. The toolchain's `package-lock.json` goes in, so `npm install`
 * gets the versions the service built with; `npm install && npx expo start` runs it.
 */
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { unzipSync, zipSync, type Zippable } from 'fflate';
import { BuildFailure, EXPORT_ARCHIVE, type BuildContext, type BuildJob, type PublishedArtifact } from '../builder.js';
import type { AgentStep } from './agent-step.js';
import type { ExpoToolchain } from './toolchain.js';
import { OUTPUT_DIR, slugOf, type ExpoWorkspace } from './workspace.js';

/** Files of the workspace that belong to the service, not to the app: never exported, never restored. */
const SERVICE_FILES = new Set(['metro.config.js']);
/** Top-level names a checkpoint never writes into the workspace. */
const NEVER_RESTORED = new Set(['.git', 'node_modules', OUTPUT_DIR, '.expo', 'package-lock.json', ...SERVICE_FILES]);
/** Largest unpacked checkpoint, in bytes. */
const MAX_RESTORED_BYTES = 200 * 1024 * 1024;

/**
 * Packs the workspace's tracked files into `<workspace>/.svc/export/source.zip` (see the file comment).
 * @param tracked the tracked files when the caller has them (`StagedCommit.files`; default: asks git)
 * @returns the folder to publish as the export (it holds the zip alone)
 */
export async function packCheckpoint(
  workspace: ExpoWorkspace,
  toolchain: ExpoToolchain,
  appName: string,
  tracked?: readonly string[],
): Promise<string> {
  const root = slugOf(appName);
  const files: Zippable = {};
  for (const path of tracked ?? (await workspace.trackedFiles())) {
    if (SERVICE_FILES.has(path)) continue;
    const file = join(workspace.dir, path);
    // Regular files only: a link is the app's own business, but never followed out of it.
    if (!(await lstat(file).catch(() => null))?.isFile()) continue;
    files[`${root}/${path}`] = path === 'app.json' ? withoutServiceConfig(await readFile(file)) : await readFile(file);
  }
  files[`${root}/package-lock.json`] = await readFile(join(toolchain.shippedDir, 'package-lock.json'));
  const dir = join(workspace.dir, OUTPUT_DIR, 'export');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // Stored, not deflated: the engine searches published files for the project's secrets
  // (docs/security.md "Project environment"), which it could not find in compressed bytes. The
  // sources are small; the images are compressed already.
  await writeFile(join(dir, EXPORT_ARCHIVE), zipSync(files, { level: 0 }));
  return dir;
}

/**
 * Says where the workflow's checkpoint is once `publication` (of the zip `packCheckpoint` left, as
 * the workflow's export: docs/builders.md "Checkpoints") ends (and, for a restore, what was restored).
 * @throws what `BuildContext.publish` throws (`secret_in_artifact`, `artifact_quota_exceeded`…)
 */
export async function publishCheckpoint(
  job: BuildJob,
  context: BuildContext,
  publication: Promise<PublishedArtifact>,
): Promise<void> {
  const exported = await publication;
  const source = `${exported.path}${EXPORT_ARCHIVE}`;
  const restore = job.restore;
  if (restore) {
    const deploy = restore.deployNumber === null ? '' : ` (deploy #${restore.deployNumber})`;
    await context.say(
      `Restored ${job.project.name} to the checkpoint of workflow ${restore.workflowId}${deploy}, as a new build; every later checkpoint stays restorable. Its source: ${source}.`,
      'result',
    );
  } else await context.say(`Checkpoint saved: the app's source as a zip at ${source} (npm install && npx expo start).`);
}

/** `app.json` without the service's constant relative base URL of web previews. */
function withoutServiceConfig(bytes: Buffer): Uint8Array {
  try {
    const config = JSON.parse(bytes.toString('utf8')) as { expo?: { experiments?: Record<string, unknown> } };
    const experiments = config.expo?.experiments;
    if (!experiments || experiments.baseUrl !== '.') return bytes;
    delete experiments.baseUrl;
    if (Object.keys(experiments).length === 0) delete config.expo!.experiments;
    return Buffer.from(`${JSON.stringify(config, null, 2)}\n`);
  } catch {
    return bytes;
  }
}

/**
 * Makes the workspace's app files those of the checkpoint `archive` (a `source.zip` of
 * `packCheckpoint`): every tracked file is removed, then the zip's files are written. Paths that
 * would leave the workspace, or write git, `node_modules`, output folders or the service's files,
 * are refused.
 * @returns how many files were written
 * @throws BuildFailure `checkpoint_unreadable` for a zip that is not one of ours
 */
async function restoreCheckpoint(workspace: ExpoWorkspace, archive: string): Promise<number> {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(new Uint8Array(await readFile(archive)));
  } catch {
    throw new BuildFailure('checkpoint_unreadable', 'The checkpoint is not a readable zip: nothing changed.');
  }
  const files: Array<[string, Uint8Array]> = [];
  let bytes = 0;
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith('/')) continue;
    const inside = name.split('/').slice(1).join('/');
    const path = normalize(inside);
    if (!inside || path.startsWith('..') || path.startsWith(sep) || NEVER_RESTORED.has(path.split(sep)[0]!)) continue;
    bytes += content.length;
    if (bytes > MAX_RESTORED_BYTES) throw new BuildFailure('checkpoint_unreadable', 'The checkpoint is too large.');
    files.push([path, content]);
  }
  if (!files.some(([path]) => path === 'package.json'))
    throw new BuildFailure('checkpoint_unreadable', 'The checkpoint holds no app (no package.json): nothing changed.');
  for (const path of await workspace.trackedFiles())
    if (!SERVICE_FILES.has(path)) await rm(join(workspace.dir, path), { force: true });
  for (const [path, content] of files) {
    await mkdir(dirname(join(workspace.dir, path)), { recursive: true });
    await writeFile(join(workspace.dir, path), content);
  }
  return files.length;
}

/**
 * The agent step of a restore: instead of applying an instruction, the workspace becomes the
 * checkpoint's files (`restore` of the job); the build then syncs the app's identity, type-checks,
 * exports and publishes as after any agent.
 */
export const RESTORE_STEP: AgentStep = {
  mode: 'none',
  stepName: 'Restoring the checkpoint',
  async run({ job, workspace }) {
    const restore = job.restore;
    if (!restore) throw new BuildFailure('checkpoint_missing', 'No checkpoint to restore.');
    const count = await restoreCheckpoint(workspace, restore.archive);
    const deploy = restore.deployNumber === null ? '' : ` (deploy #${restore.deployNumber})`;
    return { summary: `Restored ${count} files of the checkpoint of workflow ${restore.workflowId}${deploy}` };
  },
};
