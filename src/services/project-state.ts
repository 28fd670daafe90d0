/**
 * What each of a user's projects is doing, in brief: the web console's projects list shows it as a
 * badge (docs/console.md "Web console"). Read for all the user's projects at once, not one session per
 * project; it is not a tool result (the tools' shapes are in resource-shapes.ts).
 */
import type { WorkflowRow } from '../store/rows.js';

/** One project's state: its active workflow (kind, status, step) and how many wait behind it. */
export interface ProjectState {
  active: {
    kind: WorkflowRow['kind'];
    status: WorkflowRow['status'];
    step: { index: number; total: number; name: string | null };
  } | null;
  /** Workflows of the project waiting in its queue. */
  queued: number;
}

/** The state of a project with nothing queued or active. */
export const IDLE: ProjectState = { active: null, queued: 0 };

/**
 * Folds queued and active workflow rows (any projects, any order) into one state per project.
 * @returns a map by project id; projects without such rows are absent (idle).
 */
export function foldProjectStates(
  rows: Pick<WorkflowRow, 'projectId' | 'kind' | 'status' | 'stepIndex' | 'stepTotal' | 'stepName'>[],
): Map<string, ProjectState> {
  const states = new Map<string, ProjectState>();
  for (const row of rows) {
    const state = states.get(row.projectId) ?? { active: null, queued: 0 };
    if (row.status === 'queued') state.queued++;
    else
      state.active = {
        kind: row.kind,
        status: row.status,
        step: { index: row.stepIndex, total: row.stepTotal, name: row.stepName },
      };
    states.set(row.projectId, state);
  }
  return states;
}
