/** Every tool through a real SDK Client over streamable HTTP, and the tools/list snapshot (docs/architecture.md). */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, rpcErrorOf, startTestServer, waitFor, type TestServer } from './helpers.js';

let server: TestServer;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  server = await startTestServer();
  alice = await httpClient(server.mcpUrl, server.token('alice'));
  bob = await httpClient(server.mcpUrl, server.token('bob'));
});
afterAll(async () => {
  await alice.close();
  await bob.close();
  await server.close();
});

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBeFalsy();
  const content = result.content as Array<{ type: string; text: string; uri?: string }>;
  expect(content[0]!.type).toBe('text');
  expect(JSON.parse(content[0]!.text)).toEqual(result.structuredContent);
  // After the JSON text: svc_get_session adds one resource_link per preview URL; other tools add nothing.
  const links =
    name === 'svc_get_session'
      ? (result.structuredContent as { previewUrls: Array<{ url: string }> }).previewUrls.map((p) => p.url)
      : [];
  expect(content.slice(1).map((c) => [c.type, c.uri])).toEqual(links.map((url) => ['resource_link', url]));
  return result.structuredContent as any;
}

async function failure(client: Client, name: string, args: Record<string, unknown> = {}) {
  try {
    await client.callTool({ name, arguments: args });
  } catch (error) {
    return rpcErrorOf(error);
  }
  throw new Error(`${name} did not fail`);
}

describe('tools/list', () => {
  it('matches one contract file per tool: names, titles, schemas, annotations (a contract change must be deliberate)', async () => {
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'svc_list_projects',
      'svc_get_project',
      'svc_create_project',
      'svc_get_session',
      'svc_send_message',
      'svc_cancel_workflow',
      'svc_get_messages',
    ]);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.outputSchema, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(100);
      expect(Object.keys(tool.annotations!).sort()).toEqual([
        'destructiveHint',
        'idempotentHint',
        'openWorldHint',
        'readOnlyHint',
        'title',
      ]);
    }
    // One reviewable file per tool: tests/contract/<tool>.json.
    for (const tool of tools)
      await expect(`${JSON.stringify(tool, null, 2)}\n`).toMatchFileSnapshot(`./contract/${tool.name}.json`);
  });

  it('gives the server and each tool an icon as MCP 2025-11-25 defines it: a data: URI of an SVG, with its media type and sizes', async () => {
    const { tools } = await alice.listTools();
    const icons = [...tools.map((t) => t.icons), alice.getServerVersion()!.icons];
    for (const list of icons) {
      expect(list).toHaveLength(1);
      const [icon] = list!;
      expect(icon).toMatchObject({ mimeType: 'image/svg+xml', sizes: ['any'] });
      expect(icon!.src).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(icon!.src.split(',')[1]!, 'base64').toString('utf8')).toMatch(
        /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" [^>]*>.*<\/svg>$/,
      );
    }
    // Each tool's glyph is its own.
    expect(new Set(tools.map((t) => t.icons![0]!.src)).size).toBe(7);
  });
});

describe('tool descriptions a model can act on', () => {
  it('each description says what each of its error codes means and what to do', async () => {
    const { tools } = await alice.listTools();
    const byName = new Map(tools.map((t) => [t.name, t.description!]));
    for (const [name, text] of byName) {
      for (const shared of ['-32001', '-32005', 'retryAfterSeconds', '-32603'])
        expect(text, `${name} ${shared}`).toContain(shared);
    }
    for (const name of [
      'svc_get_project',
      'svc_create_project',
      'svc_get_session',
      'svc_send_message',
      'svc_cancel_workflow',
      'svc_get_messages',
    ]) {
      expect(byName.get(name), name).toContain('-32602');
    }
    for (const name of [
      'svc_get_project',
      'svc_get_session',
      'svc_send_message',
      'svc_cancel_workflow',
      'svc_get_messages',
    ]) {
      expect(byName.get(name), name).toMatch(/-32004[\s\S]*-32003/);
    }
    const create = byName.get('svc_create_project')!;
    expect(create).toContain('"project_creation"');
    expect(create).toContain('This is not the request rate');
    expect(create).toMatch(/-32003 with error\.data\.reason "project_limit_reached"/);
    expect(byName.get('svc_send_message')).toContain('Always pass kind');
  });
});

describe('project tools over the SDK client', () => {
  it('create, get and list agree, with output validated by the client against outputSchema', async () => {
    const created = await call(alice, 'svc_create_project', {
      name: 'Weather',
      description: 'Forecasts',
      visibility: 'public',
    });
    expect(created).toMatchObject({ name: 'Weather', description: 'Forecasts', visibility: 'public' });
    expect(await call(alice, 'svc_get_project', { projectId: created.id })).toEqual(created);
    const listed = await call(alice, 'svc_list_projects');
    expect(listed.projects[0]).toEqual(created);
    expect((await call(bob, 'svc_list_projects')).projects).toEqual([]);
  });

  it('maps errors to JSON-RPC error objects, never isError results', async () => {
    const missing = await failure(alice, 'svc_create_project', {});
    // MCP clients get JSON-RPC errors with HTTP 200, so the SDK client surfaces them as McpError with code and data.
    expect(missing).toMatchObject({ code: -32602, message: 'Missing required parameter: name' });
    const unknown = await failure(alice, 'svc_get_project', { projectId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown).toMatchObject({ code: -32004, message: 'Resource not found' });
    const priv = await call(alice, 'svc_create_project', { name: 'Secret' });
    const denied = await failure(bob, 'svc_get_project', { projectId: priv.id });
    expect(denied).toMatchObject({
      code: -32003,
      message: 'Access denied - you do not have permission for this resource',
    });
    const noTool = await failure(alice, 'svc_nope');
    expect(noTool).toMatchObject({ code: -32601, message: 'Tool not found: svc_nope' });
  });
});

describe('workflow tools over the SDK client', () => {
  it('send, session, messages and cancel work end to end', async () => {
    const project = await call(alice, 'svc_create_project', { name: 'Todo' });
    const sent = await call(alice, 'svc_send_message', { projectId: project.id, message: 'Build a todo app' });
    expect(sent).toMatchObject({ kind: 'build', status: 'running' });
    const done = await waitFor(async () => {
      const s = await call(alice, 'svc_get_session', { projectId: project.id });
      return s.hasActiveWorkflows ? null : s;
    });
    expect(done.lastWorkflow).toMatchObject({ id: sent.workflowId, status: 'completed' });
    expect(done.previewUrls[0].url).toMatch(
      new RegExp(`^http://${project.id}\\.localhost:\\d+/previews/[0-9a-f-]{36}/$`),
    );
    const page = await call(alice, 'svc_get_messages', { projectId: project.id, limit: 2 });
    expect(page.messages.map((m: any) => m.seq)).toEqual([1, 2]);
    expect(page).toMatchObject({ hasMore: true, nextAfter: 2 });
    const cancel = await call(alice, 'svc_cancel_workflow', { projectId: project.id, workflowId: sent.workflowId });
    expect(cancel).toEqual({ workflowId: sent.workflowId, status: 'completed', cancelled: false });
  });
});
