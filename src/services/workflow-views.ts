/**
 * The workflow tools' views (docs/contract.md#tools): the mappers from store rows to the shapes
 * of `resource-shapes.ts` that `svc_get_session` and `svc_get_messages` return. Pure functions,
 * apart from `workflowViewOf`, which reads the workflow's artifacts.
 */
import type { Repos } from '../store/repos.js';
import type { ArtifactRow, MessageRow, QuestionRow, WorkflowRow } from '../store/rows.js';
import { artifactPath } from '../workflows/artifact-store.js';
import { forOtherReaders } from '../builders/builder-registry.js';
import { EXPORT_ARCHIVE } from '../builders/builder.js';
import type { Checkpoint } from '../workflows/checkpoints.js';
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import {
  WORKFLOW_TITLE_MAX,
  type CheckpointView,
  type MessageView,
  type PendingQuestion,
  type PreviewUrl,
  type WorkflowView,
} from './resource-shapes.js';
import type { PublicUrl } from './public-url.js';

/** Where preview URLs point: the public base URL of a row's artifacts (`public-url.ts`). */
export type ArtifactBase = Pick<PublicUrl, 'artifactBaseOf'>;

/**
 * The view of workflow `row` with the preview URLs of every artifact it published (one read of
 * `artifacts`). @throws the store's error when the read fails.
 */
export async function workflowViewOf(
  artifacts: Pick<Repos['artifacts'], 'listByWorkflow'>,
  row: WorkflowRow,
  base: ArtifactBase,
): Promise<WorkflowView> {
  const published = await artifacts.listByWorkflow(row.id);
  const exported = published.find((a) => a.kind === 'export');
  return workflowView(
    row,
    published.filter((a) => a.kind !== 'export').map((a) => toPreviewUrl(a, base)),
    exported ? exportUrl(exported, base) : null,
  );
}

/**
 * The view of a workflow with the given preview URLs (`[]` for a queued one: it has published
 * nothing) and the URL of its export (a checkpoint), if any.
 */
export function workflowView(
  row: WorkflowRow,
  previewUrls: PreviewUrl[],
  exported: string | null = null,
): WorkflowView {
  return {
    id: row.id,
    kind: row.kind,
    title: workflowTitle(row.instruction),
    status: row.status,
    step: { index: row.stepIndex, total: row.stepTotal, name: row.stepName },
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? '' } : null,
    previewUrls,
    export: exported,
  };
}

/** The absolute URL of an export's zip (docs/builders.md "Checkpoints"), on its project's origin like a web preview. */
function exportUrl(row: ArtifactRow, base: ArtifactBase): string {
  return `${base.artifactBaseOf(row)}${artifactPath(row)}${EXPORT_ARCHIVE}`;
}

/** The session's view of a checkpoint. */
export function toCheckpointView(checkpoint: Checkpoint, base: ArtifactBase): CheckpointView {
  return {
    workflowId: checkpoint.workflowId,
    deployNumber: checkpoint.deployNumber,
    createdAt: checkpoint.artifact.createdAt,
    export: exportUrl(checkpoint.artifact, base),
  };
}

/**
 * A pending question as the session shows it: its options and pattern parsed; for a code question
 * its answer format and its longest answer in code points (`MAX_MESSAGE_LENGTH` unless it has its own).
 */
export function toPendingQuestion(q: QuestionRow): PendingQuestion {
  const out: PendingQuestion = {
    questionId: q.id,
    workflowId: q.workflowId,
    kind: q.kind,
    prompt: q.prompt,
    askedAt: q.askedAt,
  };
  if (q.options) out.options = JSON.parse(q.options) as string[];
  if (q.pattern) out.pattern = q.pattern;
  if (q.kind === 'code') {
    if (q.format) out.format = JSON.parse(q.format) as Record<string, unknown>;
    out.maxLength = q.maxLength ?? MAX_MESSAGE_LENGTH;
  }
  return out;
}

/** A preview URL built at read time from the public base URL (docs/builders.md). */
export function toPreviewUrl(row: ArtifactRow, base: ArtifactBase): PreviewUrl {
  if (row.kind === 'export') throw new Error('An export is not a preview URL');
  return {
    url: row.externalUrl ?? `${base.artifactBaseOf(row)}${artifactPath(row)}`,
    platform: row.platform,
    kind: row.kind,
    deployNumber: row.kind === 'deployment' ? row.number : null,
    workflowId: row.workflowId,
    createdAt: row.createdAt,
  };
}

/**
 * A message of the conversation; for a reader who is not the project's owner (`owner` false) its
 * content is what other readers may see (`forOtherReaders`: the private "latest" update URL hidden).
 */
export function toMessageView(row: MessageRow, owner: boolean): MessageView {
  return {
    id: row.id,
    seq: row.seq,
    role: row.role,
    type: row.type,
    content: owner ? row.content : forOtherReaders(row.content),
    workflowId: row.workflowId,
    createdAt: row.createdAt,
  };
}

/** A workflow's `title`: the first non-blank line of its instruction, at most WORKFLOW_TITLE_MAX code points. */
function workflowTitle(instruction: string): string {
  // Line by line up to the first non-blank one (a trailing \r is trimmed with the blanks).
  let line = '';
  for (let start = 0; start <= instruction.length;) {
    const end = instruction.indexOf('\n', start);
    line = instruction.slice(start, end === -1 ? instruction.length : end).trim();
    if (line !== '' || end === -1) break;
    start = end + 1;
  }
  // No longer in UTF-16 units than the limit: no longer in code points either.
  if (line.length <= WORKFLOW_TITLE_MAX) return line;
  const points = [...line];
  return points.length <= WORKFLOW_TITLE_MAX ? line : `${points.slice(0, WORKFLOW_TITLE_MAX - 1).join('')}…`;
}
