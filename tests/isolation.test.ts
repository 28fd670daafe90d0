/**
 * Tenant isolation and tokens (the README; docs/contract.md#tokens-and-security): the store never holds a token,
 * and a matrix of every tool x {owner, other user, no token} x {private, public project}.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, createProject, startTestServer, toolResult, waitIdle, type TestServer } from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer;
let owner: string;
let other: string;
const projects: Record<'private' | 'public', any> = {} as never;
const lastWorkflow: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
  owner = server.token('olivia');
  other = server.token('oscar');
  projects.private = await createProject(server.mcpUrl, owner, {
    name: 'Olivia private zebra',
    description: 'secret-plans',
    visibility: 'private',
  });
  projects.public = await createProject(server.mcpUrl, owner, { name: 'Olivia public', visibility: 'public' });
  for (const p of Object.values(projects)) {
    const sent = await toolResult(server.mcpUrl, owner, 'svc_send_message', {
      projectId: p.id,
      message: 'build the zebra-instructions',
    });
    await waitIdle(server.mcpUrl, owner, p.id);
    lastWorkflow[p.id] = sent.workflowId;
  }
});
afterAll(() => server.close());

describe('tokens at rest', () => {
  it('no file of the data dir (database, WAL, workspaces, artifacts) contains a token', async () => {
    const tokens = [owner, other, server.token('third')];
    sqliteOf(server.app.store).pragma('wal_checkpoint(PASSIVE)');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk(server.dataDir);
    expect(files.some((f) => f.endsWith('mobile-builder.db'))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file).toString('latin1');
      for (const token of tokens) {
        expect(bytes.includes(token), file).toBe(false);
        expect(bytes.includes(token.slice(4)), file).toBe(false);
      }
    }
  });
});

type Who = 'owner' | 'other' | 'none';
const tokenOf = (who: Who) => (who === 'owner' ? owner : who === 'other' ? other : undefined);

/** Expected HTTP status of each tool for each caller and visibility (docs/contract.md#tools access rules). */
const MATRIX: Array<{
  tool: string;
  args: (id: string) => Record<string, unknown>;
  write: boolean;
  projectScoped: boolean;
}> = [
  { tool: 'svc_list_projects', args: () => ({}), write: false, projectScoped: false },
  { tool: 'svc_get_project', args: (id) => ({ projectId: id }), write: false, projectScoped: true },
  { tool: 'svc_create_project', args: () => ({ name: 'new one' }), write: true, projectScoped: false },
  { tool: 'svc_get_session', args: (id) => ({ projectId: id }), write: false, projectScoped: true },
  { tool: 'svc_send_message', args: (id) => ({ projectId: id, message: 'build' }), write: true, projectScoped: true },
  // A finished workflow: the owner gets 200 with cancelled false, and nothing changes.
  {
    tool: 'svc_cancel_workflow',
    args: (id) => ({ projectId: id, workflowId: lastWorkflow[id] }),
    write: true,
    projectScoped: true,
  },
  { tool: 'svc_get_messages', args: (id) => ({ projectId: id }), write: false, projectScoped: true },
];

function expectedStatus(row: (typeof MATRIX)[number], who: Who, visibility: 'private' | 'public'): number {
  if (who === 'none') return 401;
  if (!row.projectScoped || who === 'owner') return 200;
  if (row.write) return 403;
  return visibility === 'public' ? 200 : 403;
}

describe('access matrix: every tool x caller x visibility', () => {
  for (const row of MATRIX) {
    for (const visibility of ['private', 'public'] as const) {
      for (const who of ['owner', 'other', 'none'] as const) {
        it(`${row.tool} by ${who} on a ${visibility} project -> ${expectedStatus(row, who, visibility)}`, async () => {
          const project = projects[visibility];
          const res = await callTool(server.mcpUrl, tokenOf(who), row.tool, row.args(project.id));
          expect(res.status).toBe(expectedStatus(row, who, visibility));
          if (row.tool === 'svc_send_message' && res.status === 200) {
            await toolResult(server.mcpUrl, owner, 'svc_cancel_workflow', { projectId: project.id });
          }
          if (res.status !== 200) {
            // Error texts never carry the project's data.
            for (const secret of ['zebra', 'secret-plans', 'Olivia', 'olivia', '/previews/'])
              expect(res.text).not.toContain(secret);
          }
          if (row.tool === 'svc_list_projects' && who === 'other') {
            expect(res.json.result.structuredContent.projects.map((p: any) => p.id)).not.toContain(project.id);
          }
        });
      }
    }
  }

  it("the other user reads a public project's session and messages, but never a private one's preview URL", async () => {
    const pub = await toolResult(server.mcpUrl, other, 'svc_get_session', { projectId: projects.public.id });
    expect(pub.previewUrls.length).toBeGreaterThan(0);
    const priv = await callTool(server.mcpUrl, other, 'svc_get_session', { projectId: projects.private.id });
    expect(priv.status).toBe(403);
    const ownerView = await toolResult(server.mcpUrl, owner, 'svc_get_session', { projectId: projects.private.id });
    const previewId = ownerView.previewUrls[0].url.split('/').at(-2);
    expect(priv.text).not.toContain(previewId);
    const messages = await callTool(server.mcpUrl, other, 'svc_get_messages', { projectId: projects.private.id });
    expect(messages.text).not.toContain('zebra');
  });

  it("a workflow id of another user's project is not found through one's own project", async () => {
    const mine = await createProject(server.mcpUrl, other, { name: 'oscar own' });
    const victim = await toolResult(server.mcpUrl, owner, 'svc_get_session', { projectId: projects.private.id });
    const res = await callTool(server.mcpUrl, other, 'svc_cancel_workflow', {
      projectId: mine.id,
      workflowId: victim.lastWorkflow.id,
    });
    expect(res.status).toBe(404);
    // The same answer as an id that exists nowhere: nothing of the other project is learnt.
    expect(res.json.error).toEqual({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'workflow', reason: 'unknown id' },
    });
  });
});
