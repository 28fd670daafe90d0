/**
 * Checkpoints (docs/builders.md "Checkpoints"): every completed workflow of a builder that keeps
 * them (`Builder.restores`) published an export, a zip of the app's files as the workflow left
 * them. A restore names one by its workflow id, or by a deploy number (`3`, `#3`: the checkpoint of
 * the workflow that published that deploy). Read by the send (to refuse a name that is no
 * checkpoint, and to store the restore's instruction) and by the engine (to hand the builder the zip).
 */
import { invalidParameter } from '../errors.js';
import type { ReleaseRepo } from '../store/release-repo.js';
import type { ArtifactRepo } from '../store/repos.js';
import type { ArtifactRow } from '../store/rows.js';

/** Checkpoints looked through when one is named, newest first. */
const CHECKPOINTS_SEARCHED = 1000;
/** Checkpoints and deploy numbers an error names. */
const NAMED_IN_ERRORS = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEPLOY_NUMBER = /^#?\s*(\d{1,9})$/;

/** One checkpoint: the workflow that made it, its export, and the deploy it was published as. */
export interface Checkpoint {
  workflowId: string;
  /** The export artifact (its `source.zip`). */
  artifact: ArtifactRow;
  deployNumber: number | null;
}

/** The project's newest `limit` checkpoints, newest first. */
export async function listCheckpoints(
  artifacts: Pick<ArtifactRepo, 'listByKind'>,
  projectId: string,
  limit: number,
): Promise<Checkpoint[]> {
  const exports = await artifacts.listByKind(projectId, 'export', limit);
  if (exports.length === 0) return [];
  // Deploys publish several platforms under one number: enough rows for every listed checkpoint.
  const deployments = await artifacts.listByKind(projectId, 'deployment', limit * 3);
  const numbers = new Map(deployments.map((d) => [d.workflowId, d.number]));
  return exports
    .filter((a): a is ArtifactRow & { workflowId: string } => a.workflowId !== null)
    .map((artifact) => ({
      workflowId: artifact.workflowId,
      artifact,
      deployNumber: numbers.get(artifact.workflowId) ?? null,
    }));
}

/**
 * The checkpoint of deploy `number`. A rollback publishes no checkpoint of its own: its number
 * names the checkpoint of the deploy it published again (followed through `releases`, rollback of
 * a rollback included).
 */
async function deployCheckpoint(
  all: Checkpoint[],
  projectId: string,
  number: number,
  releases: Pick<ReleaseRepo, 'byNumber'> | undefined,
): Promise<Checkpoint | undefined> {
  let target: number | null | undefined = number;
  for (let hops = 0; target !== null && target !== undefined && hops <= all.length; hops++) {
    const found = all.find((c) => c.deployNumber === target);
    if (found || !releases) return found;
    target = (await releases.byNumber(projectId, target))?.rollbackOf;
  }
  return undefined;
}

/**
 * The checkpoint `name` names: a workflow id, or a deploy number (`3`, `#3`).
 * @throws ServiceError -32602 (`Invalid parameter: message ...`) when it names none of the project's
 *   checkpoints; `data` lists the workflow ids and deploy numbers that exist (the newest `NAMED_IN_ERRORS`)
 */
export async function resolveCheckpoint(
  artifacts: Pick<ArtifactRepo, 'listByKind'>,
  projectId: string,
  name: string,
  releases?: Pick<ReleaseRepo, 'byNumber'>,
): Promise<Checkpoint> {
  const wanted = name.trim();
  const all = await listCheckpoints(artifacts, projectId, CHECKPOINTS_SEARCHED);
  const number = DEPLOY_NUMBER.exec(wanted)?.[1];
  const found = UUID.test(wanted)
    ? all.find((c) => c.workflowId.toLowerCase() === wanted.toLowerCase())
    : number !== undefined
      ? await deployCheckpoint(all, projectId, Number(number), releases)
      : undefined;
  if (found) return found;
  const data = {
    checkpoints: all.slice(0, NAMED_IN_ERRORS).map((c) => c.workflowId),
    deployNumbers: all
      .map((c) => c.deployNumber)
      .filter((n): n is number => n !== null)
      .slice(0, NAMED_IN_ERRORS),
  };
  if (all.length === 0)
    throw invalidParameter(
      'message',
      'names no checkpoint: this project has none yet (every completed build makes one)',
      data,
    );
  const shown = [...data.deployNumbers.map((n) => `#${n}`), ...data.checkpoints.slice(0, 5)].join(', ');
  throw invalidParameter(
    'message',
    `names no checkpoint of this project: pass a workflow id of its checkpoints or a deploy number (${shown}${all.length > 5 ? ', ...' : ''}; error.data lists them)`,
    data,
  );
}

/** The instruction a restore is stored with: what the conversation and the workflow's title show. */
export function restoreInstruction(checkpoint: Checkpoint): string {
  const deploy = checkpoint.deployNumber === null ? '' : ` (deploy #${checkpoint.deployNumber})`;
  return `Restore the checkpoint of workflow ${checkpoint.workflowId}${deploy}`;
}

/** The workflow id a restore's instruction names (`restoreInstruction`), or null. */
export function restoredWorkflowOf(instruction: string): string | null {
  return /workflow ([0-9a-f-]{36})/i.exec(instruction)?.[1] ?? null;
}
