/**
 * One number per deploy, shared by its platforms (docs/contract.md#tools, "Deploy numbers"):
 * - a deploy that publishes web, ios and android gives all three the same `deployNumber`, the next
 *   deploy the next number, and previews none; the build's message says `Deploy #N: <platform>`;
 * - the migration renumbers deployments made before, numbered across platforms (web #4, ios #5,
 *   android #6), into one number per deploy, on a real store migrated from the previous schema.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/store.js';
import { sqliteOf } from './store-access.js';
import { createProject, ROOT, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from './helpers.js';

let server: TestServer | undefined;

afterAll(async () => {
  await server?.close();
});

describe('deploy numbers', () => {
  it('gives every platform of one deploy the same number, and the next deploy the next one', async () => {
    const dir = tempDir('mbm-deploy-numbers-');
    const deploy = [
      'mkdir -p out && echo "<h1>app</h1>" > out/index.html',
      'echo "::preview web out"',
      'for p in web ios android; do echo "::deployment $p out"; done',
      'echo "::result deployed"',
    ].join('\n');
    writeFileSync(
      join(dir, 'builder.json'),
      JSON.stringify({ build: { command: 'true' }, deploy: { command: deploy } }),
    );
    server = await startTestServer({ builder: 'command', builderConfigFile: join(dir, 'builder.json') });
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token);

    const numbersOf = async (workflowId: string) => {
      const done = await waitIdle(server!.mcpUrl, token, project.id);
      expect(done.lastWorkflow).toMatchObject({ id: workflowId, status: 'completed' });
      const deployments = done.lastWorkflow.previewUrls.filter((u: any) => u.kind === 'deployment');
      expect(deployments.map((u: any) => u.platform).sort()).toEqual(['android', 'ios', 'web']);
      expect(done.lastWorkflow.previewUrls.find((u: any) => u.kind === 'preview').deployNumber).toBeNull();
      return { session: done, numbers: deployments.map((u: any) => u.deployNumber) };
    };
    const first = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy it',
      kind: 'deploy',
    });
    expect((await numbersOf(first.workflowId)).numbers).toEqual([1, 1, 1]);
    const second = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy again',
      kind: 'deploy',
    });
    const { session, numbers } = await numbersOf(second.workflowId);
    expect(numbers).toEqual([2, 2, 2]);
    // The session's latest deployment of each platform is deploy #2.
    expect(session.previewUrls.filter((u: any) => u.kind === 'deployment').map((u: any) => u.deployNumber)).toEqual([
      2, 2, 2,
    ]);

    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    const said = messages.filter((m: any) => m.workflowId === second.workflowId).map((m: any) => m.content);
    for (const platform of ['web', 'ios', 'android'])
      expect(said.some((c: string) => c.startsWith(`Deploy #2: ${platform} published at /deployments/`))).toBe(true);
  });

  it('renumbers deployments numbered across platforms into one number per deploy when the store is migrated', async () => {
    const dir = tempDir('mbm-deploy-migration-');
    // The migrations as they were before this one: the journal without its last entry.
    const before = join(dir, 'drizzle');
    cpSync(join(ROOT, 'drizzle'), before, { recursive: true });
    const journalFile = join(before, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
    const index = journal.entries.findIndex((e: any) => e.tag.endsWith('_deploy_numbers'));
    expect(index).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, index);
    writeFileSync(journalFile, JSON.stringify(journal));
    const file = join(dir, 'store.db');
    const old = new Database(file);
    migrate(drizzle(old), { migrationsFolder: before });
    const now = '2026-01-01T00:00:00.000Z';
    old.prepare("insert into users (id, name, plan, created_at) values ('u1', 'alice', 'free', ?)").run(now);
    for (const p of ['p1', 'p2'])
      old
        .prepare(
          "insert into projects (id, owner_id, name, visibility, created_at, updated_at) values (?, 'u1', ?, 'private', ?, ?)",
        )
        .run(p, p, now, now);
    let seq = 0;
    const workflow = (id: string, project: string) =>
      old
        .prepare(
          "insert into workflows (id, project_id, seq, kind, status, instruction, created_at) values (?, ?, ?, 'deploy', 'completed', 'Deploy it', ?)",
        )
        .run(id, project, ++seq, now);
    workflow('w1', 'p1');
    workflow('w2', 'p1');
    workflow('w3', 'p2');
    const artifact = (
      id: string,
      project: string,
      workflowId: string | null,
      kind: string,
      platform: string,
      number: number | null,
    ) =>
      old
        .prepare(
          'insert into artifacts (id, project_id, workflow_id, kind, platform, number, created_at) values (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(id, project, workflowId, kind, platform, number, now);
    // p1: deploy w1 was web #1, ios #2, android #3; w2 was web #4, ios #5, android #6; one preview.
    artifact('a1', 'p1', 'w1', 'deployment', 'web', 1);
    artifact('a2', 'p1', 'w1', 'deployment', 'ios', 2);
    artifact('a3', 'p1', 'w1', 'deployment', 'android', 3);
    artifact('a4', 'p1', 'w2', 'deployment', 'web', 4);
    artifact('a5', 'p1', 'w2', 'deployment', 'ios', 5);
    artifact('a6', 'p1', 'w2', 'deployment', 'android', 6);
    artifact('a7', 'p1', 'w2', 'preview', 'web', null);
    // p2: a deployment whose workflow is gone (workflow_id null), then deploy w3.
    artifact('b1', 'p2', null, 'deployment', 'web', 1);
    artifact('b2', 'p2', 'w3', 'deployment', 'web', 2);
    artifact('b3', 'p2', 'w3', 'deployment', 'ios', 3);
    old.close();

    const store = await openStore({ file });
    try {
      const numbers = Object.fromEntries(
        (
          sqliteOf(store).prepare('select id, number from artifacts order by id').all() as {
            id: string;
            number: number | null;
          }[]
        ).map((r) => [r.id, r.number]),
      );
      expect(numbers).toEqual({ a1: 1, a2: 1, a3: 1, a4: 2, a5: 2, a6: 2, a7: null, b1: 1, b2: 2, b3: 2 });
    } finally {
      await store.close();
    }
  });
});
