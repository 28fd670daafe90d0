/**
 * A property test of the engine (docs/workflows.md): random interleavings of send, answer, cancel,
 * builder steps (finish, fail, ask) and restarts (graceful or crash) on two projects. After every
 * step: never two active workflows in a project, workflows of a project start in FIFO order,
 * terminal states never change, every message the service acknowledged is stored as sent, and each
 * project's message seq is gapless. At the end,
 * driving every builder to its end drains every queue.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngine, type EngineUnderTest } from './engine-harness.js';
import { tempDir, waitFor } from './helpers.js';
import { sqliteOf } from './store-access.js';

type Action =
  | { t: 'send'; p: number }
  | { t: 'answer'; p: number }
  | { t: 'cancelActive'; p: number }
  | { t: 'cancelQueued'; p: number }
  | { t: 'builder'; pick: number; how: 'finish' | 'fail' | 'ask' }
  | { t: 'restart'; crash: boolean };

const project = fc.integer({ min: 0, max: 1 });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('send' as const), p: project }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('answer' as const), p: project }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('cancelActive' as const), p: project }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('cancelQueued' as const), p: project }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('builder' as const),
      pick: fc.nat(),
      how: fc.constantFrom('finish' as const, 'fail' as const, 'ask' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), crash: fc.boolean() }) },
);

const live: EngineUnderTest[] = [];
afterEach(async () => {
  for (const e of live.splice(0)) await e.stop();
});

class Model {
  readonly acknowledged: { projectId: string; messageId: string; content: string }[] = [];
  readonly terminal = new Map<string, { status: string; finishedAt: string | null }>();
  sent = 0;

  constructor(
    public engine: EngineUnderTest,
    readonly projects: string[],
  ) {}

  check(): void {
    const db = sqliteOf(this.engine.app.store);
    const active = db
      .prepare(
        "select project_id, count(*) as n from workflows where status in ('running', 'waiting_for_input', 'cancelling') group by project_id",
      )
      .all() as { n: number }[];
    for (const row of active) expect(row.n).toBeLessThanOrEqual(1);
    for (const row of db.prepare('select id, status, finished_at from workflows').all() as any[]) {
      const seen = this.terminal.get(row.id);
      if (seen) expect({ status: row.status, finishedAt: row.finished_at }).toEqual(seen);
      else if (['completed', 'failed', 'cancelled'].includes(row.status))
        this.terminal.set(row.id, { status: row.status, finishedAt: row.finished_at });
    }
    // Per-project FIFO: of two workflows that started, the older one started first.
    for (const projectId of this.projects) {
      const started = db
        .prepare('select seq, started_at from workflows where project_id = ? and started_at is not null order by seq')
        .all(projectId) as any[];
      for (let i = 1; i < started.length; i++) expect(started[i].started_at >= started[i - 1].started_at).toBe(true);
    }
    const byId = db.prepare('select content from messages where id = ?');
    for (const ack of this.acknowledged)
      expect((byId.get(ack.messageId) as { content: string } | undefined)?.content).toBe(ack.content);
    for (const projectId of this.projects) {
      const seqs = (
        db.prepare('select seq from messages where project_id = ? order by seq').all(projectId) as { seq: number }[]
      ).map((r) => r.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
  }

  async apply(a: Action): Promise<void> {
    const e = this.engine;
    switch (a.t) {
      case 'send': {
        const content = `instruction ${++this.sent}`;
        const r = await e.send(this.projects[a.p]!, content);
        this.acknowledged.push({ projectId: this.projects[a.p]!, messageId: r.messageId, content });
        return;
      }
      case 'answer': {
        const projectId = this.projects[a.p]!;
        if (!(await e.app.workflows.session(e.caller, projectId)).pendingQuestion) return;
        const r = await e.answer(projectId, 'yes');
        this.acknowledged.push({ projectId, messageId: r.messageId, content: 'yes' });
        return;
      }
      case 'cancelActive': {
        const session = await e.app.workflows.session(e.caller, this.projects[a.p]!);
        if (session.activeWorkflow) await e.cancel(this.projects[a.p]!, session.activeWorkflow.id);
        return;
      }
      case 'cancelQueued': {
        const session = await e.app.workflows.session(e.caller, this.projects[a.p]!);
        const first = session.queuedWorkflows[0];
        if (first) await e.cancel(this.projects[a.p]!, first.id);
        return;
      }
      case 'builder': {
        const runs = e.builder.live().filter((r) => r.idle);
        if (runs.length === 0) return;
        const run = runs[a.pick % runs.length]!;
        const answersBefore = run.answers.length;
        if (a.how === 'finish') run.finish();
        else if (a.how === 'fail') run.fail();
        else run.ask();
        // Wait for the builder to act on it: it ended, waits for an answer, or got a stored answer.
        await waitFor(
          () =>
            run.ended ||
            e.row(run.job.workflowId).status === 'waiting_for_input' ||
            (run.idle && run.answers.length > answersBefore),
          10_000,
          'the builder to act',
        );
        return;
      }
      case 'restart': {
        if (a.crash) await e.crash();
        else await e.stop();
        this.engine = await startEngine({ dataDir: e.dataDir, maxConcurrent: 2 });
        live.push(this.engine);
        return;
      }
    }
  }

  /** Drives every builder to its end and answers every question until nothing is queued or active. */
  async drain(): Promise<void> {
    await waitFor(
      async () => {
        const e = this.engine;
        for (const run of e.builder.live()) if (run.idle) run.finish();
        for (const projectId of this.projects)
          if ((await e.app.workflows.session(e.caller, projectId)).pendingQuestion) await e.answer(projectId, 'yes');
        const open = sqliteOf(e.app.store)
          .prepare("select count(*) as n from workflows where status not in ('completed', 'failed', 'cancelled')")
          .get() as { n: number };
        return open.n === 0;
      },
      20_000,
      'every queue to drain',
    );
  }
}

describe('the engine under random interleavings', () => {
  it('keeps its invariants after every step, and drains', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 25 }), async (actions) => {
        const engine = await startEngine({ dataDir: tempDir('mbm-prop-'), maxConcurrent: 2 });
        live.push(engine);
        const model = new Model(engine, [await engine.createProject('P'), await engine.createProject('Q')]);
        for (const a of actions) {
          await model.apply(a);
          model.check();
        }
        await model.drain();
        model.check();
        for (const e of live.splice(0)) await e.stop();
      }),
      { numRuns: 40 },
    );
  });
});
