/**
 * Writes workflow state changes together with the conversation messages that report them, in one
 * write transaction each (issue: "every state change is written before its effect is reported").
 * Terminal states are never left: every transition is a compare-and-set on the old status.
 */
import { randomUUID } from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import type { Store } from '../store/database.js';
import type { MessageRepo } from '../store/message-repo.js';
import type { ProjectRepo } from '../store/project-repo.js';
import type { MessageRow, WorkflowRow, WorkflowStatus } from '../store/schema.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';

/** Who speaks in a message. */
export type MessageRole = MessageRow['role'];
/** What kind of message it is. */
export type MessageType = MessageRow['type'];

/** A message to append: who says it, what kind it is, and the text. */
export interface NewMessage {
  role: MessageRole;
  type: MessageType;
  content: string;
}

/** Longest content of one stored message, in UTF-16 units (longer text is cut with a note). */
export const MAX_MESSAGE_CONTENT = 20_000;

/** Atomic state changes with their messages (see above). */
export class WorkflowJournal {
  constructor(
    readonly store: Store,
    private readonly workflows: WorkflowRepo,
    private readonly messages: MessageRepo,
    private readonly projects: ProjectRepo,
    private readonly clock: Clock,
  ) {}

  now(): string {
    return isoNow(this.clock);
  }

  /** Appends a message to the project's conversation (inside the caller's transaction, if any). */
  post(projectId: string, workflowId: string | null, message: NewMessage): MessageRow {
    const content =
      message.content.length > MAX_MESSAGE_CONTENT ? `${message.content.slice(0, MAX_MESSAGE_CONTENT)}\n[truncated]` : message.content;
    return this.store.immediate(() =>
      this.messages.append({ id: randomUUID(), projectId, workflowId, role: message.role, type: message.type, content, createdAt: this.now() }),
    );
  }

  /**
   * Moves `workflow` from one of `from` to `patch.status` and posts `message` if it did.
   * Finishing statuses get `finishedAt`; `completed` also moves the project's `updatedAt`.
   * @returns true when the transition happened.
   */
  transition(
    workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
    from: WorkflowStatus[],
    patch: Partial<WorkflowRow> & { status: WorkflowStatus },
    message?: NewMessage,
  ): boolean {
    return this.store.immediate(() => {
      const now = this.now();
      const finishing = patch.status === 'completed' || patch.status === 'failed' || patch.status === 'cancelled';
      const full = finishing ? { finishedAt: now, ...patch } : patch;
      if (!this.workflows.transition(workflow.id, from, full)) return false;
      if (patch.status === 'completed') this.projects.touch(workflow.projectId, now);
      if (message) this.post(workflow.projectId, workflow.id, message);
      return true;
    });
  }
}

/** `Build` / `Deploy`: the kind as a message starts it. */
export function kindLabel(kind: WorkflowRow['kind']): string {
  return kind === 'build' ? 'Build' : 'Deploy';
}
