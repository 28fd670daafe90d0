/**
 * The workflow state machine, in one place (docs/workflows.md explains it). The store's column
 * enum and partial unique index, the tool output schemas, the services' state checks and the
 * diagram of docs/workflows.md derive from the constants here; `tests/workflow-states.test.ts` checks each of
 * them against this table. A leaf of `core/` (docs/architecture.md, "Layers"): it imports nothing,
 * so every layer, the store included, may use it.
 */

/** Every workflow status, in the order docs/workflows.md lists them. */
export const WORKFLOW_STATUSES = [
  'queued',
  'running',
  'waiting_for_input',
  'cancelling',
  'completed',
  'failed',
  'cancelled',
] as const;
/** A workflow status. */
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** Statuses that hold a project's single active slot (the partial unique index covers exactly these). */
export const ACTIVE_STATUSES = [
  'running',
  'waiting_for_input',
  'cancelling',
] as const satisfies readonly WorkflowStatus[];
/** Statuses that never change again. */
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly WorkflowStatus[];

/** What makes a workflow change state. */
export const WORKFLOW_EVENTS = [
  'claim',
  'ask',
  'answer',
  'complete',
  'fail',
  'interrupt',
  'cancel',
  'stopped',
] as const;
/** An event of the state machine. */
export type WorkflowEvent = (typeof WORKFLOW_EVENTS)[number];

/** One row of the transition table. */
export interface Transition {
  from: WorkflowStatus;
  event: WorkflowEvent;
  to: WorkflowStatus;
  /** Why it happens, in the words the docs use. */
  why: string;
}

/**
 * The transition table: every state change a workflow can make. A (from, event) pair not listed
 * here is a bug, and `nextStatus` refuses it.
 */
export const TRANSITIONS: readonly Transition[] = [
  {
    from: 'queued',
    event: 'claim',
    to: 'running',
    why: "an engine claims it (project idle, FIFO, a server slot free and its owner's turn)",
  },
  { from: 'queued', event: 'cancel', to: 'cancelled', why: 'cancelled before it started' },
  { from: 'running', event: 'ask', to: 'waiting_for_input', why: 'the builder asks a question' },
  {
    from: 'waiting_for_input',
    event: 'answer',
    to: 'running',
    why: "the question is answered and a server slot is free for it (its owner's turn); until then it stays waiting_for_input with no pending question",
  },
  { from: 'running', event: 'complete', to: 'completed', why: 'the builder returned' },
  { from: 'running', event: 'fail', to: 'failed', why: 'the builder threw' },
  {
    from: 'running',
    event: 'interrupt',
    to: 'failed',
    why: 'shutdown, or the runner lost its lease (error.code "interrupted")',
  },
  { from: 'running', event: 'cancel', to: 'cancelling', why: 'the owner cancels it' },
  { from: 'waiting_for_input', event: 'cancel', to: 'cancelling', why: 'the owner cancels it' },
  { from: 'cancelling', event: 'stopped', to: 'cancelled', why: 'the builder stopped, or its runner lost its lease' },
];

/** Thrown for a state change that is not in the table: a bug in the caller, never a user error. */
export class IllegalTransitionError extends Error {
  constructor(
    readonly from: WorkflowStatus,
    readonly event: WorkflowEvent,
  ) {
    super(`Illegal workflow transition: no "${event}" from "${from}"`);
    this.name = 'IllegalTransitionError';
  }
}

/**
 * The status `event` moves a workflow in `from` to.
 * @throws IllegalTransitionError when the table has no such row.
 */
export function nextStatus(from: WorkflowStatus, event: WorkflowEvent): WorkflowStatus {
  const row = TRANSITIONS.find((t) => t.from === from && t.event === event);
  if (!row) throw new IllegalTransitionError(from, event);
  return row.to;
}

/**
 * The statuses from which `event` moves a workflow to `to`, in the table's order; for example
 * `statusesBefore('cancel', 'cancelling')` is `['running', 'waiting_for_input']`.
 */
export function statusesBefore(event: WorkflowEvent, to: WorkflowStatus): WorkflowStatus[] {
  return TRANSITIONS.filter((t) => t.event === event && t.to === to).map((t) => t.from);
}

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminal(status: WorkflowStatus): boolean {
  return (TERMINAL_STATUSES as readonly WorkflowStatus[]).includes(status);
}

/**
 * The state diagram of docs/workflows.md, as Mermaid (`stateDiagram-v2`), rendered from the table; that page
 * holds this exact text between `<!-- workflow-states:begin -->` and `<!-- workflow-states:end -->`.
 */
export function renderStateDiagram(): string {
  const lines = ['```mermaid', 'stateDiagram-v2', '  [*] --> queued: send_message'];
  for (const t of TRANSITIONS) lines.push(`  ${t.from} --> ${t.to}: ${t.event}`);
  for (const s of TERMINAL_STATUSES) lines.push(`  ${s} --> [*]`);
  lines.push('```');
  return lines.join('\n');
}
