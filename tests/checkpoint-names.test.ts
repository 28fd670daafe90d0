/**
 * How a restore names its checkpoint (docs/builders.md "Checkpoints"), on a real SQLite store with
 * the real migrations: a workflow id (any case) or a deploy number (`3`, `#3`: the checkpoint of the
 * workflow that published deploy #3); a name that is no checkpoint of the project (another
 * project's workflow, a number no deploy has, text) is -32602 listing the workflow ids and deploy
 * numbers that exist, newest first; the restore's instruction names the checkpoint and is read back.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../src/errors.js';
import type { ArtifactRow, WorkflowRow } from '../src/store/rows.js';
import { openStore, type Store } from '../src/store/store.js';
import { resolveCheckpoint, restoredWorkflowOf, restoreInstruction } from '../src/workflows/checkpoints.js';
import { newRelease } from '../src/workflows/release-recorder.js';
import { tempDir } from './helpers.js';

let store: Store;
const owner = randomUUID();
const [mine, theirs] = [randomUUID(), randomUUID()];
const at = (n: number) => new Date(Date.UTC(2026, 10, 29, 0, 0, n)).toISOString();

async function workflow(projectId: string, kind: WorkflowRow['kind'], seq: number): Promise<string> {
  const id = randomUUID();
  await store.repos.workflows.insert({
    id,
    projectId,
    seq,
    kind,
    status: 'completed',
    instruction: kind,
    stepIndex: 0,
    stepTotal: 0,
    stepName: null,
    runnerId: null,
    leaseExpiresAt: null,
    errorCode: null,
    errorMessage: null,
    createdAt: at(seq),
    startedAt: at(seq),
    finishedAt: at(seq),
  });
  return id;
}

async function artifact(
  projectId: string,
  workflowId: string,
  kind: ArtifactRow['kind'],
  n: number,
  number: number | null,
) {
  await store.repos.artifacts.insert({
    id: randomUUID(),
    projectId,
    workflowId,
    kind,
    platform: 'web',
    number,
    externalUrl: null,
    bytes: 1,
    createdAt: at(n),
    blobId: null,
  });
}

beforeAll(async () => {
  store = await openStore({ file: join(tempDir('mbm-checkpoints-'), 'store.db') });
  await store.repos.users.insert({ id: owner, name: 'cora', plan: 'free', createdAt: at(0) });
  for (const id of [mine, theirs])
    await store.repos.projects.insert({
      id,
      ownerId: owner,
      name: id,
      description: null,
      visibility: 'private',
      createdAt: at(0),
      updatedAt: at(0),
      messageSeq: 0,
      deploymentSeq: 0,
      workspaceVersion: 0,
    });
});

afterAll(async () => {
  await store?.close();
});

describe('checkpoint names', () => {
  it('finds a checkpoint by workflow id or deploy number, and refuses anything else naming what exists', async () => {
    const build = await workflow(mine, 'build', 1);
    await artifact(mine, build, 'preview', 1, null);
    await artifact(mine, build, 'export', 1, null);
    const deploy = await workflow(mine, 'deploy', 2);
    await artifact(mine, deploy, 'deployment', 2, 1);
    await artifact(mine, deploy, 'export', 2, null);
    const other = await workflow(theirs, 'build', 3);
    await artifact(theirs, other, 'export', 3, null);

    const { artifacts } = store.repos;
    expect((await resolveCheckpoint(artifacts, mine, build.toUpperCase())).workflowId).toBe(build);
    for (const name of ['1', '#1', ' #1 '])
      expect(await resolveCheckpoint(artifacts, mine, name)).toMatchObject({ workflowId: deploy, deployNumber: 1 });

    for (const name of [other, '#2', '0', 'latest', randomUUID()]) {
      const error = await resolveCheckpoint(artifacts, mine, name).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).message).toMatch(
        /^Invalid parameter: message names no checkpoint of this project/,
      );
      expect((error as ServiceError).data).toEqual({ checkpoints: [deploy, build], deployNumbers: [1] });
    }

    const checkpoint = await resolveCheckpoint(artifacts, mine, '#1');
    expect(restoreInstruction(checkpoint)).toBe(`Restore the checkpoint of workflow ${deploy} (deploy #1)`);
    expect(restoredWorkflowOf(restoreInstruction(checkpoint))).toBe(deploy);

    // A rollback (deploy #2, republishing #1) makes no checkpoint: "#2" names #1's, through the releases.
    const rollback = await workflow(mine, 'rollback', 4);
    await store.repos.releases.insert(
      newRelease({ id: rollback, projectId: mine, createdAt: at(4) }, { rollbackOf: 1 }),
    );
    await store.repos.releases.update(rollback, { number: 2 });
    expect(await resolveCheckpoint(artifacts, mine, '#2', store.repos.releases)).toMatchObject({
      workflowId: deploy,
      deployNumber: 1,
    });
    await expect(resolveCheckpoint(artifacts, mine, '#3', store.repos.releases)).rejects.toThrow(/names no checkpoint/);
  });
});
