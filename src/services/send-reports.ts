/**
 * What `svc_send_message` answers once the send is recorded (docs/contract.md#tools,
 * docs/workflows.md): `running` when a build slot was claimed, else `queued` with the queue
 * position and a status message in the conversation saying why the workflow waits.
 */
import type { Caller } from '../auth/caller.js';
import { limitsFor, workflowBounds, type PlanTable } from '../limits/plans.js';
import type { WorkflowRow } from '../store/rows.js';
import type { Tx } from '../store/store.js';
import type { EngineStarts } from '../workflows/engine-starts.js';
import type { WorkflowEngine } from '../workflows/workflow-engine.js';
import { kindLabel, type WorkflowJournal } from '../workflows/workflow-journal.js';
import type { NodeRegistry } from '../workflows/node-registry.js';
import type { Recorded } from './send-record.js';
import type { SendMessageResult } from './resource-shapes.js';

/** What the reports need: the engine (whether it claims, its runner id), the journal, the plans and the nodes. */
export interface SendReportDeps {
  engine: Pick<WorkflowEngine, 'claims' | 'runnerId'>;
  journal: Pick<WorkflowJournal, 'post'>;
  /** The plans, for each user's bound on running workflows. */
  plans: PlanTable;
  /** The nodes serving the store: says when no worker serves a queued workflow's builder (`node-registry.ts`). */
  nodes?: Pick<NodeRegistry, 'waitingFor'> | undefined;
}

/** Where the first status is going: `queued`, or waiting for input with its question answered. */
export type UnclaimedFrom = 'queued' | 'waiting_for_input';

/** What the send's transaction decided: the answer, and `unclaimed` when another node has to start the workflow. */
export interface SendOutcome {
  result: SendMessageResult;
  unclaimed?: UnclaimedFrom;
}

/** The send's transaction and its sender. */
export interface SendTx {
  tx: Tx;
  caller: Caller;
}

/** A recorded send inside its transaction, after the engine's offer. */
export interface SentReport extends SendTx {
  projectId: string;
  recorded: Recorded;
  /** The workflows the engine's offer claimed in this transaction (none made: undefined). */
  starts: EngineStarts | undefined;
}

/**
 * Inside the send's transaction, after the record and the engine's offer: the answer, and whether
 * another node has to start it. Publishes the `workflow` and `queued` notices that wake the
 * runners (docs/architecture.md "Change notices").
 */
export async function reportSent(deps: SendReportDeps, sent: SentReport): Promise<SendOutcome> {
  const { engine } = deps;
  const { tx, projectId, recorded, starts } = sent;
  const { workflowId } = recorded.result;
  if (recorded.answered) {
    // The runner holding the workflow resumes it (on any node: the `workflow` notice), or,
    // when nobody holds it, whichever engine has a slot claims it (the `queued` notice).
    const row = await tx.workflows.findById(workflowId);
    tx.publish({ kind: 'workflow', id: workflowId });
    const status = starts?.started(workflowId) ? 'running' : row?.status;
    if (status !== 'waiting_for_input') return { result: recorded.result };
    if (row?.runnerId === null) tx.publish({ kind: 'queued', id: projectId });
    // Another node holds it (or this one claims nothing): its runner resumes it on the notice.
    const heldElsewhere = row?.runnerId != null && row.runnerId !== engine.runnerId;
    if (!engine.claims || heldElsewhere) return { result: recorded.result, unclaimed: 'waiting_for_input' };
    return { result: await reportAnsweredWaiting(deps, sent, recorded.result) };
  }
  // The service only records the request; the engine owns the claim.
  if (starts?.started(workflowId)) return { result: { ...recorded.result, status: 'running' } };
  // Behind the project's active workflow: claimable once that one ends, which publishes the notice.
  // No claim was offered in this transaction, so the row is still the one it inserted.
  if (recorded.behindActive)
    return { result: await reportQueued(deps, sent, recorded.result, recorded.row && { row: recorded.row }) };
  // Claimable by another node's engine.
  tx.publish({ kind: 'queued', id: projectId });
  if (!engine.claims && !(await waitsForProject(tx, workflowId, projectId)))
    return { result: recorded.result, unclaimed: 'queued' };
  return { result: await reportQueued(deps, sent, recorded.result) };
}

/**
 * The answer for a workflow still in status `from` after the wait for another node's claim
 * (`settleUnclaimed` in `message-sender.ts`): `reportQueued` or `reportAnsweredWaiting`.
 */
export function reportWaiting(
  deps: SendReportDeps,
  at: SendTx,
  waiting: { result: SendMessageResult; from: UnclaimedFrom },
): Promise<SendMessageResult> {
  return waiting.from === 'queued'
    ? reportQueued(deps, at, waiting.result)
    : reportAnsweredWaiting(deps, at, waiting.result);
}

/** Whether queued workflow `workflowId` waits for other workflows of its project (not only for a slot). */
async function waitsForProject(tx: Tx, workflowId: string, projectId: string): Promise<boolean> {
  const queued = await tx.workflows.listQueued(projectId);
  return queued[0]?.id !== workflowId || (await tx.workflows.findActive(projectId)) !== undefined;
}

/**
 * The answer for a workflow this engine could not start: `running` when another engine claimed
 * it meanwhile, else `queued` with its position and a status message saying why it waits.
 * @param behindActive the row this transaction inserted behind its project's active workflow,
 *   with no claim offered since (`Recorded.row`): it is neither read again nor is the active one.
 */
async function reportQueued(
  deps: SendReportDeps,
  at: SendTx,
  result: SendMessageResult,
  behindActive?: { row: WorkflowRow },
): Promise<SendMessageResult> {
  const { journal } = deps;
  const { tx } = at;
  const { workflows } = tx;
  const row = behindActive?.row ?? (await workflows.findById(result.workflowId));
  if (!row || row.status !== 'queued') return { ...result, status: 'running' };
  const queued = await workflows.listQueued(row.projectId);
  const position = queued.findIndex((w) => w.id === row.id) + 1;
  const waitsForProject =
    position > 1 || behindActive !== undefined || (await workflows.findActive(row.projectId)) !== undefined;
  await journal.post(
    row.projectId,
    row.id,
    {
      role: 'system',
      type: 'status',
      content: waitsForProject
        ? `${kindLabel(row.kind)} queued at position ${position}: it starts when the workflows ahead of it finish.`
        : `${kindLabel(row.kind)} queued: ${await slotShortage(deps, at, row)}; it starts when ${(await deps.nodes?.waitingFor(row, tx)) ? 'one is running' : 'one finishes'}.`,
    },
    tx,
  );
  return { ...result, status: 'queued', queuePosition: position };
}

/**
 * The answer for an answered workflow that waits for a build slot: `queued` (position 1: it is
 * its project's next), with a status message saying why it waits; `running` when it resumed
 * meanwhile.
 */
async function reportAnsweredWaiting(
  deps: SendReportDeps,
  at: SendTx,
  result: SendMessageResult,
): Promise<SendMessageResult> {
  const { tx } = at;
  const row = await tx.workflows.findById(result.workflowId);
  if (!row || row.status !== 'waiting_for_input' || (await tx.questions.pendingOf(row.id))) return result;
  await deps.journal.post(
    row.projectId,
    row.id,
    {
      role: 'system',
      type: 'status',
      content: `Answer received. ${capitalised(await slotShortage(deps, at, row))}: the ${kindLabel(row.kind).toLowerCase()} continues when a slot frees.`,
    },
    tx,
  );
  return { ...result, status: 'queued', queuePosition: 1 };
}

/**
 * Why a workflow of `caller` that could start did not get a build slot, as a clause: no live
 * worker has its builder; the owner's plan bound on running workflows when it is reached; else
 * the server's cap.
 */
async function slotShortage(deps: SendReportDeps, { tx, caller }: SendTx, row: WorkflowRow): Promise<string> {
  const unserved = await deps.nodes?.waitingFor(row, tx);
  if (unserved) return unserved;
  const { maxRunning } = workflowBounds(limitsFor(deps.plans, caller.plan));
  const running = (await tx.workflows.runningByOwner()).get(caller.userId) ?? 0;
  if (running >= maxRunning)
    return `your plan allows ${maxRunning} running workflow${maxRunning === 1 ? '' : 's'} at once and you have ${running}`;
  // A node that claims nothing (the `api` role) waits for the build workers.
  if (!deps.engine.claims) return 'every build worker is busy (or none is running)';
  return 'the server is running its maximum number of workflows';
}

/** `text` with its first letter upper-case. */
function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
