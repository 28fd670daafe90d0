/**
 * The artifact quota is checked inside the publish transaction, under the owner's row lock
 * (docs/workflows.md "Locks across nodes"): two builds of one owner publishing at once (on one node
 * or on two) cannot both fit in what is left, although each fits alone.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { ArtifactPublisher } from '../src/workflows/artifact-publisher.js';
import { GENEROUS_PLANS, tempDir } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

const apps: App[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the artifact quota', () => {
  it('two publications of one owner at once, each fitting alone, not both: one is refused with artifact_quota_exceeded', async () => {
    const dataDir = tempDir('mbm-quota-');
    dirs.push(dataDir);
    const plans = { free: { ...GENEROUS_PLANS.free, artifactStorageMb: 1 } };
    const app = await createApp({
      dataDir,
      logger: silentLogger(),
      builderInstance: new ManualBuilder(),
      pollIntervalMs: 3_600_000,
      plans,
    });
    apps.push(app);
    await app.start();
    const caller = await app.tokens.authenticate((await app.tokens.create('alice')).token);
    const publisher = new ArtifactPublisher({
      store: app.store,
      artifactStore: app.artifactStore,
      plans,
      clock: app.clock,
      logger: silentLogger(),
    });
    const sources = await Promise.all(
      ['one', 'two'].map(async (name) => {
        const projectId = (await app.projects.create(caller, { name })).id;
        const { workflowId } = await app.workflows.send(caller, { projectId, message: 'build', kind: 'build' });
        const dir = join(dataDir, `source-${name}`);
        mkdirSync(dir);
        // 600 KiB each: one fits in the 1 MiB quota, two do not.
        writeFileSync(join(dir, 'bundle.js'), randomBytes(600 * 1024));
        return { projectId, workflowId, dir };
      }),
    );
    const outcomes = await Promise.allSettled(
      sources.map((s) =>
        publisher.publish(s.projectId, s.workflowId, { kind: 'preview', platform: 'web', sourceDir: s.dir }),
      ),
    );
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected')!;
    expect(refused.reason).toMatchObject({ code: 'artifact_quota_exceeded' });
    expect(await app.store.repos.artifacts.bytesUsedByOwner(caller.userId)).toBe(600 * 1024);
    // The refused copy left nothing behind.
    expect(readdirSync(join(dataDir, 'artifacts'))).toHaveLength(1);
  });

  it('an export held by recordAfter is recorded once it resolves, and not at all (its copy removed) when it rejects', async () => {
    const dataDir = tempDir('mbm-record-after-');
    dirs.push(dataDir);
    const app = await createApp({
      dataDir,
      logger: silentLogger(),
      builderInstance: new ManualBuilder(),
      pollIntervalMs: 3_600_000,
      plans: GENEROUS_PLANS,
    });
    apps.push(app);
    await app.start();
    const caller = await app.tokens.authenticate((await app.tokens.create('alice')).token);
    const publisher = new ArtifactPublisher({
      store: app.store,
      artifactStore: app.artifactStore,
      plans: GENEROUS_PLANS,
      clock: app.clock,
      logger: silentLogger(),
    });
    const projectId = (await app.projects.create(caller, { name: 'gated' })).id;
    const { workflowId } = await app.workflows.send(caller, { projectId, message: 'build', kind: 'build' });
    const dir = join(dataDir, 'source');
    mkdirSync(dir);
    writeFileSync(join(dir, 'source.zip'), randomBytes(1024));
    const exportsOf = () => app.store.repos.artifacts.listByKind(projectId, 'export', 10);
    const gated = (recordAfter: Promise<unknown>) =>
      publisher.publish(projectId, workflowId, { kind: 'export', platform: 'web', sourceDir: dir, recordAfter });

    let open = (): void => undefined;
    const recorded = gated(new Promise<void>((resolve) => (open = resolve)));
    // The copy is made while the gate is shut; the row only once it opens.
    const copies = () => (existsSync(join(dataDir, 'artifacts')) ? readdirSync(join(dataDir, 'artifacts')) : []);
    while (copies().length === 0) await new Promise((r) => setTimeout(r, 10));
    expect(await exportsOf()).toHaveLength(0);
    open();
    const published = (await recorded).published;
    expect((await exportsOf()).map((row) => row.id)).toEqual([published.id]);

    const refusal = new Error('the preview before it failed');
    const shut = Promise.reject(refusal);
    shut.catch(() => undefined);
    await expect(gated(shut)).rejects.toBe(refusal);
    expect((await exportsOf()).map((row) => row.id)).toEqual([published.id]);
    expect(readdirSync(join(dataDir, 'artifacts'))).toHaveLength(1);
  });
});
