/**
 * Writes workflow state changes together with the conversation messages that report them, in one
 * write transaction each: every state change is stored before its effect is reported
 * (docs/workflows.md). Every change is a compare-and-set on the old status, checked against the
 * transition table of `workflow-states.ts`, and optionally on the runner that holds the lease.
 */
import { randomUUID } from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import { MAX_MESSAGE_LENGTH } from '../core/message-limits.js';
import type { Logger } from '../logger.js';
import type { MessageRow, WorkflowRow } from '../store/rows.js';
import type { Store, Tx } from '../store/store.js';
import {
  IllegalTransitionError,
  isTerminal,
  nextStatus,
  type WorkflowEvent,
  type WorkflowStatus,
} from '../core/workflow-states.js';

/** Who speaks in a message. */
type MessageRole = MessageRow['role'];
/** What kind of message it is. */
type MessageType = MessageRow['type'];

/** A message to append: who says it, what kind it is, and the text. */
export interface NewMessage {
  role: MessageRole;
  type: MessageType;
  content: string;
}

/** What `WorkflowJournal.transition` writes with a state change, and the holder it checks. */
export interface TransitionOptions {
  /** Columns written with the new status (default none; `finishedAt` is added for a finishing status unless given). */
  patch?: Partial<Omit<WorkflowRow, 'status'>>;
  /** The conversation message that reports the change, posted in the same transaction. */
  message?: NewMessage | undefined;
  /** The runner that must still hold the workflow (`null`: no runner may); undefined: not checked. */
  owner?: string | null | undefined;
  /** The caller's transaction (it must hold the project's row lock); absent: one of its own. */
  tx?: Tx | undefined;
  /** Run in the same transaction when the workflow completes, with the project's new workspace version. */
  onCompleted?: ((tx: Tx, workspaceVersion: number) => Promise<void>) | undefined;
}

const TRUNCATION_NOTE = '\n[truncated]';

/** Atomic state changes with their messages (see above). */
export class WorkflowJournal {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger?: Logger,
  ) {}

  /**
   * Tells live views (the web console), waiting sessions and waiting sends on every node, after
   * `tx` commits, that the project's workflows or conversation changed.
   */
  changed(tx: Tx, projectId: string): void {
    tx.publish({ kind: 'project', id: projectId });
  }

  /** The clock's instant as ISO 8601. */
  now(): string {
    return isoNow(this.clock);
  }

  /**
   * Appends a message to the project's conversation, inside `tx` when given (else in its own
   * transaction). Agent and system text longer than `MAX_MESSAGE_LENGTH` code points is cut with a
   * note; a user's text is stored as acknowledged.
   */
  async post(projectId: string, workflowId: string | null, message: NewMessage, tx?: Tx): Promise<MessageRow> {
    if (!tx) {
      return this.store.transaction(async (own) => {
        // The project's row first, as every transaction that writes a project's rows takes it (docs/workflows.md "Locks across nodes").
        await own.lock('projects', projectId);
        return this.post(projectId, workflowId, message, own);
      });
    }
    const content = message.role === 'user' ? message.content : cutToLength(message.content, MAX_MESSAGE_LENGTH);
    const row = await tx.messages.append({
      id: randomUUID(),
      projectId,
      workflowId,
      role: message.role,
      type: message.type,
      content,
      createdAt: this.now(),
    });
    this.changed(tx, projectId);
    return row;
  }

  /**
   * Applies `event` to `workflow` if its stored status is still `from` (and, when `options.owner`
   * is given, if that runner still holds it; `null`: if no runner does), writes `options.patch`,
   * and posts `options.message`, inside `options.tx` when given (else in its own transaction, which
   * locks the project's row first; a caller's `tx` must hold that lock already when it changes
   * another project's rows; docs/workflows.md "Locks across nodes").
   * Finishing statuses get `finishedAt`; `completed` also moves the project's `updatedAt` and its workspace version,
   * and runs `options.onCompleted` with that version in the same transaction.
   * Change notices, after the commit: `project` always; `workflow` (id) when it becomes `cancelling`;
   * `queued` (project id) when it ends (the project's next workflow may start); `cache`
   * (`project:<id>`) when it completes (the project row changed).
   * @returns true when the transition happened (false: the row had moved on, or another runner holds it).
   * @throws IllegalTransitionError (logged) when `event` is not allowed from `from`: nothing is written.
   */
  async transition(
    workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
    from: WorkflowStatus,
    event: WorkflowEvent,
    options: TransitionOptions = {},
  ): Promise<boolean> {
    const { patch = {}, message, owner, tx, onCompleted } = options;
    let to: WorkflowStatus;
    try {
      to = nextStatus(from, event);
    } catch (error) {
      if (error instanceof IllegalTransitionError)
        this.logger?.error({ workflowId: workflow.id, from, event }, error.message);
      throw error;
    }
    if (!tx) {
      return this.store.transaction(async (own) => {
        await own.lock('projects', workflow.projectId);
        return this.transition(workflow, from, event, { ...options, tx: own });
      });
    }
    const now = this.now();
    const full = { ...(isTerminal(to) && { finishedAt: now }), ...patch, status: to };
    if (!(await tx.workflows.transition(workflow.id, from, full, owner))) return false;
    if (to === 'completed') {
      const version = await tx.projects.completeWorkspace(workflow.projectId, now);
      await onCompleted?.(tx, version);
      // Its `updatedAt` moved: every node's cached copy of the project row is stale.
      tx.publish({ kind: 'cache', id: `project:${workflow.projectId}` });
    }
    if (message) await this.post(workflow.projectId, workflow.id, message, tx);
    this.changed(tx, workflow.projectId);
    // Whoever holds the workflow stops its builder (a cancel made through another node).
    if (to === 'cancelling') tx.publish({ kind: 'workflow', id: workflow.id });
    // The project's next queued workflow may start now, on any node.
    if (isTerminal(to)) tx.publish({ kind: 'queued', id: workflow.projectId });
    return true;
  }

  /**
   * The claim of a queued workflow (`queued -> running` with `patch`: runner, lease, start time),
   * inside `tx`, only if it is the oldest queued workflow of its project and the project has no
   * active one; posts `message` with it.
   * @returns true when this call claimed it.
   */
  async claim(
    tx: Tx,
    workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
    patch: Partial<Omit<WorkflowRow, 'status'>>,
    message: NewMessage,
  ): Promise<boolean> {
    const to = nextStatus('queued', 'claim');
    if (!(await tx.workflows.claimQueued(workflow.id, { ...patch, status: to }))) return false;
    await this.post(workflow.projectId, workflow.id, message, tx);
    this.changed(tx, workflow.projectId);
    return true;
  }
}

/** `text` cut to at most `max` code points (never inside a surrogate pair), with a note when cut. */
function cutToLength(text: string, max: number): string {
  // Fast path: UTF-16 length bounds the code point count from above.
  if (text.length <= max) return text;
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === max) return `${text.slice(0, end)}${TRUNCATION_NOTE}`;
    count++;
    end += ch.length;
  }
  return text;
}

/** The kind as a message starts it: `Build`, `Deploy`, `Rollback`, `Restore`. */
const KIND_LABELS: Record<WorkflowRow['kind'], string> = {
  build: 'Build',
  deploy: 'Deploy',
  rollback: 'Rollback',
  restore: 'Restore',
};

/** `Build` / `Deploy` / `Rollback` / `Restore`: the kind as a message starts it. */
export function kindLabel(kind: WorkflowRow['kind']): string {
  return KIND_LABELS[kind];
}
