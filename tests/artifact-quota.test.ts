/**
 * The artifact quota is checked inside the publish transaction, under the owner's row lock
 * (docs/workflows.md "Locks across nodes"): two builds of one owner publishing at once (on one node
 * or on two) cannot both fit in what is left, although each fits alone.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
});
