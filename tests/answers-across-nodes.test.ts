/**
 * Code answers sent through a node that builds nothing (docs/workflows.md "Where answers are
 * checked", docs/builders.md "Code questions"): an `api` node with its own data dir (no workspace, no
 * toolchain at the path the question stores, as on another host) and build workers on the
 * same store. The node holding the workflow checks the answer and the API node goes on exactly as
 * the worker would: an accepted answer resumes the build; a refused one gives the same -32602 issues
 * and stores nothing; a holder that does not answer gives a clear error and stores nothing; a
 * workflow nobody holds (released by a drain) is checked by the first free worker; the question's
 * pages of files are the same on every node. Run on SQLite (one file, the nodes in one process
 * as two processes on one host) and on PostgreSQL when the run has it. Tests wait on states, never on time.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp, type App, type AppConfig } from '../src/app.js';
import type { Caller } from '../src/auth/caller.js';
import { codeAnswerFormat, type CodeAnswerRules } from '../src/builders/expo/code-answer.js';
import { ServiceError } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import type { WorkflowRow } from '../src/store/rows.js';
import { GENEROUS_PLANS, ROOT, tempDir, waitFor } from './helpers.js';
import { ManualBuilder, type ManualRun } from './manual-builder.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './setup/pg-database.js';

/** A store the nodes share: the config that points a node at it (SQLite: the file in `shared`). */
interface SharedStore {
  name: string;
  config(shared: string): Promise<Partial<AppConfig>>;
}

/** This file's PostgreSQL database, made on first use. */
let pgDatabase: Promise<TestDatabase> | undefined;
afterAll(async () => (await pgDatabase)?.drop());

const STORES: SharedStore[] = [
  { name: 'sqlite', config: async (shared) => ({ databaseFile: join(shared, 'mobile-builder.db') }) },
  ...(postgresAvailable()
    ? [{ name: 'postgres', config: async () => ({ databaseUrl: (await (pgDatabase ??= createTestDatabase())).url }) }]
    : []),
];

/** One node: a whole service with its own runner host and builder. */
interface Node {
  app: App;
  builder: ManualBuilder;
  crashed: boolean;
}

const started: Node[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const node of started.splice(0).reverse()) {
    if (node.crashed) {
      await node.app.engine.shutdown().catch(() => undefined);
      continue;
    }
    for (const run of node.builder.live()) run.fail('test over');
    await node.app.close();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts a node whose runner host is `host`, on the store of `shared` with `dataDir` as its own data dir. */
async function startNode(
  store: SharedStore,
  shared: string,
  dataDir: string,
  host: string,
  config: Partial<AppConfig> = {},
): Promise<Node> {
  const builder = new ManualBuilder();
  const before = process.env.SVC_RUNNER_HOST;
  process.env.SVC_RUNNER_HOST = host;
  let app: App;
  try {
    app = await createApp({
      dataDir,
      ...(await store.config(shared)),
      logger: silentLogger(),
      builderInstance: builder,
      pollIntervalMs: 3_600_000,
      maxConcurrentWorkflows: 2,
      plans: GENEROUS_PLANS,
      ...config,
    });
  } finally {
    if (before === undefined) delete process.env.SVC_RUNNER_HOST;
    else process.env.SVC_RUNNER_HOST = before;
  }
  await app.start();
  const node = { app, builder, crashed: false };
  started.push(node);
  return node;
}

/** The rules of the test's code question, on the worker's workspace (`workspaceDir`); small pages so that there are several. */
function rulesOn(workspaceDir: string): CodeAnswerRules {
  return {
    root: workspaceDir,
    packages: ['expo', 'react', 'react-native'],
    typescriptFrom: join(ROOT, 'node_modules'),
    maxFiles: 5,
    maxFileBytes: 100_000,
    maxTotalBytes: 150_000,
    filePaging: { first: 60, page: 80 },
  };
}

const SCREEN =
  "import { Text } from 'react-native';\nexport function Settings() {\n  return <Text>Settings</Text>;\n}\n";
const GOOD = JSON.stringify({
  summary: 'Adds a Settings screen',
  files: [{ path: 'src/Settings.tsx', content: SCREEN }],
  delete: ['src/old.ts'],
});
const BAD = JSON.stringify({
  summary: 'Uses a package the app does not have',
  files: [{ path: 'src/Chart.tsx', content: "import { Chart } from 'chart-kit';\nexport const C = Chart;\n" }],
  delete: ['src/never-there.ts'],
});

/** The -32602 a call throws. */
async function refusal(call: () => Promise<unknown>): Promise<ServiceError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).kind).toBe('invalid_params');
    return error as ServiceError;
  }
  throw new Error('expected a refusal');
}

describe.each(STORES)('code answers through a node that builds nothing, on $name', (store) => {
  /**
   * A shared store, an `api` node with its own data dir two folders deeper than the worker's (the
   * question's relative toolchain path leads nowhere there), a worker, and a build on the worker
   * waiting for a code question whose workspace holds App.tsx, src/old.ts and src/util.ts.
   */
  async function codeQuestionOnWorker(api: Partial<AppConfig> = {}, worker: Partial<AppConfig> = {}) {
    const shared = tempDir('mbm-answers-');
    dirs.push(shared);
    const a = await startNode(store, shared, join(shared, 'api', 'node', 'data'), 'api-node', {
      role: 'api',
      claimWaitMs: 60_000,
      ...api,
    });
    const w = await startNode(store, shared, shared, 'worker-node', worker);
    const { token } = await a.app.tokens.create('alice');
    const caller: Caller = await a.app.tokens.authenticate(token);
    const projectId = (await a.app.projects.create(caller, { name: 'Across' })).id;
    const sent = await a.app.workflows.send(caller, { projectId, message: 'add a settings screen', kind: 'build' });
    const run = await runOf(w, sent.workflowId);
    const workspace = run.job.workspaceDir;
    mkdirSync(join(workspace, 'src'), { recursive: true });
    writeFileSync(join(workspace, 'App.tsx'), 'export default function App() {\n  return null;\n}\n');
    writeFileSync(join(workspace, 'src', 'old.ts'), 'export const old = 1;\n');
    writeFileSync(join(workspace, 'src', 'util.ts'), `export const util = ${JSON.stringify('u'.repeat(70))};\n`);
    const rules = rulesOn(workspace);
    run.ask('code_1', 'Write the code', { kind: 'code', format: codeAnswerFormat(rules), maxLength: 240_000, rules });
    await reach(a, sent.workflowId, 'waiting_for_input');
    const questionId = (await a.app.workflows.session(caller, projectId)).pendingQuestion!.questionId;
    return { shared, a, w, caller, projectId, workflowId: sent.workflowId, questionId, run };
  }

  const rowOf = async (node: Node, id: string): Promise<WorkflowRow> =>
    (await node.app.store.repos.workflows.findById(id))!;
  const reach = (node: Node, id: string, status: WorkflowRow['status']) =>
    waitFor(
      async () => {
        const row = await rowOf(node, id);
        return row.status === status ? row : null;
      },
      15_000,
      `${id} to be ${status}`,
    );
  const runOf = (node: Node, id: string): Promise<ManualRun> =>
    waitFor(
      () => {
        const run = node.builder.runOf(id);
        return run && run.idle && !run.ended ? run : null;
      },
      15_000,
      `the build of ${id}`,
    );
  /** How many answer checks are left in the store (it deletes them to count them). */
  const leftChecks = (node: Node) => node.app.store.repos.answerChecks.deleteBefore('9999');

  it('an accepted code answer through the API node is checked by the worker holding the build, which resumes', async () => {
    const { a, caller, projectId, workflowId, questionId, run } = await codeQuestionOnWorker();
    const answered = await a.app.workflows.send(caller, { projectId, message: GOOD, questionId });
    expect(answered).toMatchObject({ workflowId, status: 'running' });
    await waitFor(() => run.answers.length > 0 && run.idle, 15_000, 'the answer to reach the builder');
    expect(run.answers).toEqual([GOOD]);
    const last = (await a.app.workflows.messages(caller, { projectId })).messages.filter((m) => m.type === 'answer');
    expect(last.map((m) => m.content)).toEqual([
      `Code answer: Adds a Settings screen\nFiles written: src/Settings.tsx (${Buffer.byteLength(SCREEN)} bytes)\nFiles deleted: src/old.ts`,
    ]);
    run.finish();
    await reach(a, workflowId, 'completed');
    expect(a.builder.runs).toEqual([]);
    // The sender deleted its check.
    expect(await leftChecks(a)).toBe(0);
  });

  it('a refused code answer gives the same -32602 issues through the API node as through the worker, and stores nothing', async () => {
    const { a, w, caller, projectId, workflowId, questionId } = await codeQuestionOnWorker();
    const before = (await a.app.workflows.messages(caller, { projectId })).messages;
    const throughApi = await refusal(() => a.app.workflows.send(caller, { projectId, message: BAD, questionId }));
    const throughWorker = await refusal(() => w.app.workflows.send(caller, { projectId, message: BAD, questionId }));
    expect(throughApi.message).toBe(throughWorker.message);
    expect(throughApi.data).toEqual(throughWorker.data);
    const problems = (throughApi.data!.issues as { parameter: string; problem: string }[]).map(
      (i) => `${i.parameter} ${i.problem}`,
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^message\.files\[0\]\.content src\/Chart\.tsx imports "chart-kit", which is not one of the app's packages/,
      ),
      'message.delete[0] "src/never-there.ts" does not exist in the app',
    ]);
    expect((await a.app.workflows.messages(caller, { projectId })).messages).toEqual(before);
    expect(await rowOf(a, workflowId)).toMatchObject({ status: 'waiting_for_input' });
    expect((await a.app.workflows.session(caller, projectId)).pendingQuestion?.questionId).toBe(questionId);
    expect(await leftChecks(a)).toBe(0);
  });

  it('when the worker holding the build does not answer the check in time, the API node says so and stores nothing', async () => {
    const { a, w, caller, projectId, workflowId, questionId } = await codeQuestionOnWorker(
      { answerCheckTimeoutMs: 300 },
      { leaseMs: 600_000 },
    );
    // The worker stops answering (its store connection closes) while its lease still runs.
    w.crashed = true;
    await w.app.store.close();
    const error = await refusal(() => a.app.workflows.send(caller, { projectId, message: GOOD, questionId }));
    expect(error.message).toBe(
      'Invalid parameter: message cannot be checked now: the build worker running this workflow did not answer the check within 0.3 s, and nothing was stored; send the answer again (the question is still pending)',
    );
    expect(error.data).toMatchObject({ reason: 'check_timed_out', questionId, kind: 'code' });
    expect((await a.app.workflows.messages(caller, { projectId })).messages.filter((m) => m.type === 'answer')).toEqual(
      [],
    );
    expect(await rowOf(a, workflowId)).toMatchObject({ status: 'waiting_for_input' });
    expect((await a.app.store.repos.questions.findById(questionId))!.answer).toBeNull();
    expect(await leftChecks(a)).toBe(0);
  });

  it("a code question's pages of files are the same through the API node as through the worker", async () => {
    const { a, w, caller, projectId } = await codeQuestionOnWorker();
    const first = await w.app.workflows.questionFiles(caller, projectId, 1);
    const pages = first.questionFiles!.pages;
    expect(pages).toBeGreaterThan(1);
    expect(first.questionFiles!.files.map((f) => f.path)).toEqual(['App.tsx']);
    for (let page = 1; page <= pages; page++) {
      expect(await a.app.workflows.questionFiles(caller, projectId, page)).toEqual(
        await w.app.workflows.questionFiles(caller, projectId, page),
      );
    }
    await refusal(() => a.app.workflows.questionFiles(caller, projectId, pages + 1));
  });

  it('a workflow nobody holds (released by a drain) has its answer checked by the first worker that takes work, which resumes it', async () => {
    const { shared, a, w, caller, projectId, workflowId, questionId } = await codeQuestionOnWorker();
    const drained = w.app.drain(600_000);
    await waitFor(
      async () => (await rowOf(a, workflowId)).runnerId === null,
      15_000,
      'the waiting workflow to be released',
    );
    await drained;
    const spare = await startNode(store, shared, shared, 'spare-node');
    const answered = await a.app.workflows.send(caller, { projectId, message: GOOD, questionId });
    expect(answered.workflowId).toBe(workflowId);
    // The spare worker claims the answered workflow and runs its builder again, which finds the answer.
    const resumed = await waitFor(
      () => {
        const run = spare.builder.runOf(workflowId);
        return run && run.idle ? run : null;
      },
      15_000,
      'the spare worker to resume the build',
    );
    expect(resumed.job.workflowId).toBe(workflowId);
    expect(w.builder.runs.filter((r) => r.job.workflowId === workflowId)).toHaveLength(1);
    const answers = (await a.app.workflows.messages(caller, { projectId })).messages.filter((m) => m.type === 'answer');
    expect(answers.map((m) => m.content)).toEqual([expect.stringMatching(/^Code answer: Adds a Settings screen\n/)]);
    resumed.finish();
    await reach(a, workflowId, 'completed');
  });
});
