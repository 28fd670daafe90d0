/**
 * Waiting for another node to move a workflow (docs/workflows.md "Change notices"): a send through a
 * node that claims nothing waits for a worker's claim, a cancel waits for the holder to stop the
 * build. The wait is woken by the store's change notices (`project` of the workflow's project,
 * and resets), re-reads the row at each, and looks again every `recheckMs` in case a notice was
 * missed (a listener that reconnected).
 */
import type { WorkflowRow } from '../store/rows.js';
import type { Store } from '../store/store.js';

/** How long a wait lasts and how often it looks without a notice. */
export interface WorkflowWaitOptions {
  /** Longest wait, in ms. */
  timeoutMs: number;
  /** Reads the row again after this long without a notice, in ms. */
  recheckMs: number;
}

/**
 * Resolves with the workflow's row once `done(row)` holds (the row is undefined when it is gone),
 * or with the last row read when `timeoutMs` passed first. Reads go through `store.repos`.
 * @throws the store's error when a read fails.
 */
export function waitForWorkflow(
  store: Pick<Store, 'repos' | 'events'>,
  workflow: Pick<WorkflowRow, 'id' | 'projectId'>,
  done: (row: WorkflowRow | undefined) => boolean,
  options: WorkflowWaitOptions,
): Promise<WorkflowRow | undefined> {
  return waitForProjectRead(
    store,
    workflow.projectId,
    () => store.repos.workflows.findById(workflow.id),
    done,
    options,
  );
}

/**
 * The wait itself, for any read of one project's rows: runs `read()` now, at each `project` notice
 * of `projectId` and each reset (one read at a time; a notice during a read reads again after it),
 * and every `recheckMs` without a notice, until `done(value)` holds; when `timeoutMs` passes first,
 * reads once more and resolves with that value, done or not.
 * @throws what `read` throws.
 */
export function waitForProjectRead<T>(
  store: Pick<Store, 'events'>,
  projectId: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: WorkflowWaitOptions,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let ended = false;
    let reading = false;
    let again = false;
    let recheck: NodeJS.Timeout | undefined;
    const finish = (outcome: { value: T } | { error: unknown }) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearTimeout(recheck);
      stopProject();
      stopReset();
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.value);
    };
    const look = (final = false) => {
      if (ended) return;
      if (reading && !final) {
        again = true;
        return;
      }
      reading = true;
      clearTimeout(recheck);
      read().then(
        (value) => {
          reading = false;
          if (final || done(value)) return finish({ value });
          if (again) {
            again = false;
            return look();
          }
          recheck = setTimeout(() => look(), options.recheckMs);
          recheck.unref();
        },
        (error: unknown) => finish({ error }),
      );
    };
    const stopProject = store.events.subscribe('project', (id) => {
      if (id === projectId) look();
    });
    const stopReset = store.events.onReset(() => look());
    const timer = setTimeout(() => look(true), Math.max(0, options.timeoutMs));
    timer.unref();
    // A change between the caller's read and the subscriptions is caught by reading once now.
    look();
  });
}
