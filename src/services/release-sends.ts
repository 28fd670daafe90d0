/**
 * What `svc_send_message` checks and records for deploys and rollbacks (docs/releases.md): a
 * deploy's `channel` and `rolloutPercent`, a rollback's deploy number, and the release row
 * recorded with the new workflow; and a rollback the user declined to confirm, recorded as
 * cancelled.
 */
import type { WorkflowKind } from '../core/releases.js';
import { invalidParameter } from '../errors.js';
import type { ReleaseRepo } from '../store/release-repo.js';
import type { ReleaseRow, WorkflowRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import type { Caller } from '../auth/caller.js';
import type { WorkflowJournal } from '../workflows/workflow-journal.js';
import { newWorkflowRow } from './workflow-row.js';
import { newRelease } from '../workflows/release-recorder.js';
import type { ProjectAccess } from './project-access.js';
import type { SendMessageResult } from './resource-shapes.js';

/** A rollback's message: a deploy number, `3` or `#3`. */
const DEPLOY_NUMBER = /^#?([1-9][0-9]{0,8})$/;

/** The release parameters of a send. */
interface ReleaseInput {
  kind?: WorkflowKind | undefined;
  message: string;
  channel?: string | undefined;
  rolloutPercent?: number | undefined;
}

/**
 * Checks the parameters only a deploy takes.
 * @throws ServiceError -32602 for `channel` or `rolloutPercent` without `kind: "deploy"`.
 */
export function checkReleaseParameters(input: ReleaseInput): void {
  for (const name of ['channel', 'rolloutPercent'] as const)
    if (input[name] !== undefined && input.kind !== 'deploy')
      throw invalidParameter(name, 'applies only to kind "deploy"');
}

/**
 * The published release a rollback's message names (`3` or `#3`) in project `projectId`.
 * @throws ServiceError -32602 naming the project's deploy numbers (`data.numbers`) when the message
 *   is not a deploy number or names none of the project's deploys.
 */
export async function rollbackTarget(
  releases: Pick<ReleaseRepo, 'byNumber' | 'numbers'>,
  projectId: string,
  message: string,
): Promise<ReleaseRow & { number: number }> {
  const match = DEPLOY_NUMBER.exec(message.trim());
  const found = match ? await releases.byNumber(projectId, Number(match[1])) : undefined;
  if (found?.number != null) return found as ReleaseRow & { number: number };
  const numbers = await releases.numbers(projectId);
  const known = numbers.length
    ? `this project's deploys are ${numbers.map((n) => `#${n}`).join(', ')}`
    : 'this project has no deploy yet';
  throw invalidParameter(
    'message',
    match
      ? `names no deploy of this project: ${known}`
      : `must be a deploy number ("3" or "#3") for kind "rollback": ${known}`,
    { numbers },
  );
}

/**
 * Inside the send's transaction, for new workflow `row`: records its release (a deploy's channel
 * and rollout; a rollback's target and channel, at 100 %). Nothing for a build or a restore.
 * @throws ServiceError -32602 as `rollbackTarget` does.
 */
export async function recordRelease(tx: Tx, row: WorkflowRow, input: ReleaseInput): Promise<void> {
  if (row.kind !== 'deploy' && row.kind !== 'rollback') return;
  const target = row.kind === 'rollback' ? await rollbackTarget(tx.releases, row.projectId, input.message) : null;
  await tx.releases.insert(
    target
      ? newRelease(row, { channel: target.channel, rollbackOf: target.number })
      : newRelease(row, {
          ...(input.channel && { channel: input.channel }),
          ...(input.rolloutPercent && { rolloutPercent: input.rolloutPercent }),
        }),
  );
}

/** What recording a declined rollback needs. */
export interface DeclineDeps {
  store: Pick<Store, 'transaction'>;
  access: Pick<ProjectAccess, 'writable'>;
  journal: Pick<WorkflowJournal, 'now' | 'post'>;
  builderName?: string | undefined;
}

/**
 * Records a rollback the user declined to confirm (docs/releases.md "Confirmation"): its
 * instruction and a status message, as a workflow that ended `cancelled` at once; nothing is
 * published and no rollout changes.
 * @throws ServiceError -32004/-32003 (owner only); -32602 as `rollbackTarget` does.
 */
export async function declineRollback(
  deps: DeclineDeps,
  caller: Caller,
  input: { projectId: string; message: string },
): Promise<SendMessageResult> {
  await deps.access.writable(caller, input.projectId);
  return deps.store.transaction(async (tx) => {
    await tx.lock('projects', input.projectId);
    const target = await rollbackTarget(tx.releases, input.projectId, input.message);
    const now = deps.journal.now();
    const row = newWorkflowRow({
      projectId: input.projectId,
      seq: await tx.workflows.nextSeq(),
      kind: 'rollback',
      instruction: input.message,
      createdAt: now,
      builder: deps.builderName ?? null,
      status: 'cancelled',
      finishedAt: now,
    });
    await tx.workflows.insert(row);
    const message = await deps.journal.post(
      input.projectId,
      row.id,
      { role: 'user', type: 'instruction', content: input.message },
      tx,
    );
    await deps.journal.post(
      input.projectId,
      row.id,
      {
        role: 'system',
        type: 'status',
        content: `Rollback to deploy #${target.number} cancelled: the user declined to confirm it. Nothing was rolled back.`,
      },
      tx,
    );
    return { messageId: message.id, workflowId: row.id, kind: 'rollback', status: 'cancelled' };
  });
}
