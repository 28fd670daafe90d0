/**
 * The real service and engine on a real SQLite file, with the manual builder and no timer-driven
 * work (the poll interval is an hour): everything that happens is caused by the test, and tests
 * wait on states, never on time. `crash()` plays a process that died: its store connection is
 * closed so it can write nothing more, and a new engine on the same data dir (same host and pid,
 * new runner id) sees it as dead.
 */
import type { App } from '../src/app.js';
import { createApp } from '../src/app.js';
import type { Caller } from '../src/auth/caller.js';
import { silentLogger } from '../src/logger.js';
import { asc, eq } from 'drizzle-orm';
import { workflows } from '../src/store/sqlite/schema.js';
import type { WorkflowRow } from '../src/store/rows.js';
import { GENEROUS_PLANS, tempDir, waitFor } from './helpers.js';
import { ManualBuilder, type ManualRun } from './manual-builder.js';
import { dbOf } from './store-access.js';

/** One engine (one "process") over a data dir. */
export interface EngineUnderTest {
  app: App;
  builder: ManualBuilder;
  caller: Caller;
  dataDir: string;
  createProject(name?: string): Promise<string>;
  send(projectId: string, message?: string): ReturnType<App['workflows']['send']>;
  answer(projectId: string, message: string): ReturnType<App['workflows']['send']>;
  cancel(projectId: string, workflowId?: string): ReturnType<App['workflows']['cancel']>;
  row(workflowId: string): WorkflowRow;
  rows(): WorkflowRow[];
  /** Waits until the builder's run of `workflowId` has started and waits for a command. */
  running(workflowId: string): Promise<ManualRun>;
  /** Waits until the workflow's status is `status`. */
  reach(workflowId: string, status: WorkflowRow['status']): Promise<WorkflowRow>;
  /** A process death: the store is closed under the engine; nothing it does afterwards is written. */
  crash(): Promise<void>;
  /** Graceful shutdown. */
  stop(): Promise<void>;
}

/** Starts the service with the manual builder on `dataDir` (a new one by default). */
export async function startEngine(
  options: { dataDir?: string; maxConcurrent?: number; builder?: ManualBuilder } = {},
): Promise<EngineUnderTest> {
  const dataDir = options.dataDir ?? tempDir('mbm-engine-');
  const builder = options.builder ?? new ManualBuilder();
  const app = await createApp({
    dataDir,
    logger: silentLogger(),
    builderInstance: builder,
    pollIntervalMs: 3_600_000,
    maxConcurrentWorkflows: options.maxConcurrent ?? 2,
    plans: GENEROUS_PLANS,
  });
  await app.start();
  const caller = await app.tokens.authenticate((await app.tokens.create('alice')).token);
  const rowOf = (id: string) => dbOf(app.store).select().from(workflows).where(eq(workflows.id, id)).get()!;
  let crashed = false;
  return {
    app,
    builder,
    caller,
    dataDir,
    createProject: async (name = 'App') => (await app.projects.create(caller, { name })).id,
    send: (projectId, message = 'build it') => app.workflows.send(caller, { projectId, message, kind: 'build' }),
    answer: (projectId, message) => app.workflows.send(caller, { projectId, message }),
    cancel: (projectId, workflowId) => app.workflows.cancel(caller, { projectId, workflowId }),
    row: rowOf,
    rows: () => dbOf(app.store).select().from(workflows).orderBy(asc(workflows.seq)).all(),
    running: (workflowId) =>
      waitFor(
        () => {
          const run = builder.runOf(workflowId);
          return run && run.idle && !run.ended ? run : null;
        },
        10_000,
        `the builder of ${workflowId} to run`,
      ),
    reach: (workflowId, status) =>
      waitFor(
        () => {
          const row = rowOf(workflowId);
          return row.status === status ? row : null;
        },
        10_000,
        `${workflowId} to be ${status}`,
      ),
    async crash() {
      crashed = true;
      await app.store.close();
    },
    async stop() {
      if (!crashed) await app.close();
    },
  };
}
