/**
 * The per-project counters (docs/architecture.md "The store port"): a store migrated from the
 * schema before them gets each project's `message_seq`, `deployment_seq` and `workspace_version`
 * from the rows it holds, so the next message and deploy number follow the last ones.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { ROOT, tempDir } from '../helpers.js';

describe('project counters migration', () => {
  it('backfills the counters from the messages, deployments and completed workflows, and numbers on from them', async () => {
    const dir = tempDir('mbm-counters-');
    const before = join(dir, 'drizzle');
    cpSync(join(ROOT, 'drizzle'), before, { recursive: true });
    const journalFile = join(before, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
    const index = journal.entries.findIndex((e: any) => e.tag.endsWith('_project_counters'));
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
    const workflow = old.prepare(
      "insert into workflows (id, project_id, seq, kind, status, instruction, created_at) values (?, 'p1', ?, 'deploy', ?, 'x', ?)",
    );
    workflow.run('w1', 1, 'completed', now);
    workflow.run('w2', 2, 'completed', now);
    workflow.run('w3', 3, 'failed', now);
    const message = old.prepare(
      "insert into messages (id, project_id, seq, role, type, content, created_at) values (?, 'p1', ?, 'user', 'instruction', 'x', ?)",
    );
    for (let seq = 1; seq <= 7; seq++) message.run(`m${seq}`, seq, now);
    const deployment = old.prepare(
      "insert into artifacts (id, project_id, workflow_id, kind, platform, number, created_at) values (?, 'p1', ?, 'deployment', ?, ?, ?)",
    );
    deployment.run('a1', 'w1', 'web', 1, now);
    deployment.run('a2', 'w2', 'web', 2, now);
    deployment.run('a3', 'w2', 'ios', 2, now);
    old.close();

    const store = await openStore({ file });
    try {
      expect(await store.repos.projects.findById('p1')).toMatchObject({
        messageSeq: 7,
        deploymentSeq: 2,
        workspaceVersion: 2,
      });
      expect(await store.repos.projects.findById('p2')).toMatchObject({
        messageSeq: 0,
        deploymentSeq: 0,
        workspaceVersion: 0,
      });
      const next = await store.transaction((tx) =>
        tx.messages.append({
          id: 'm8',
          projectId: 'p1',
          workflowId: null,
          role: 'system',
          type: 'status',
          content: 'y',
          createdAt: now,
        }),
      );
      expect(next.seq).toBe(8);
      expect(await store.transaction((tx) => tx.artifacts.deployNumber('p1', 'w3'))).toBe(3);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
