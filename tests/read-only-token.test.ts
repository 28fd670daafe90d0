/**
 * Read-only tokens (`token create --read-only`, docs/contract.md "Tokens and security"): such a
 * token lists only the tools annotated `readOnlyHint` and calls only those; a tool that writes
 * answers -32003 with `data.reason = "read_only_token"` and changes nothing. Over streamable HTTP
 * with the SDK v1 client and the SDK v2 client on the 2026-07-28 era, and over stdio.
 */
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, httpClient, mcpError, startTestServer, type TestServer } from './helpers.js';
import { stdioClient } from './stream-client.js';

const READ_TOOLS = ['svc_get_messages', 'svc_get_project', 'svc_get_session', 'svc_list_projects'];

let server: TestServer;
let readOnly: string;
let projectId: string;
let v1: Client;
let v2: ClientV2;
let stdio: Client;
let stdioDone: Promise<void>;

beforeAll(async () => {
  server = await startTestServer();
  const writer = server.token('alice');
  projectId = (await createProject(server.mcpUrl, writer, { name: 'Read me' })).id;
  readOnly = (await server.app.tokens.create('alice', undefined, true)).token;
  v1 = await httpClient(server.mcpUrl, readOnly);
  v2 = new ClientV2({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await v2.connect(
    new HttpTransportV2(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${readOnly}` } } }),
  );
  ({ client: stdio, done: stdioDone } = await stdioClient(server.app, readOnly));
});
afterAll(async () => {
  await v1.close();
  await v2.close();
  await stdio.close();
  await stdioDone;
  await server.close();
});

describe('a read-only token', () => {
  it('is listed as read-only', async () => {
    const [summary] = (await server.app.tokens.list('alice')).filter((t) => t.readOnly);
    expect(summary).toMatchObject({ user: 'alice', state: 'active', readOnly: true });
  });

  for (const transport of ['http (SDK v1)', 'stdio'] as const) {
    it(`lists only the read-only tools and calls them, and a write answers -32003 with its reason, over ${transport}`, async () => {
      const client = transport === 'stdio' ? stdio : v1;
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      const session = await client.callTool({ name: 'svc_get_session', arguments: { projectId } });
      expect((session.structuredContent as any).projectId).toBe(projectId);
      const refused = await mcpError(
        client.callTool({ name: 'svc_send_message', arguments: { projectId, message: 'Build it' } }),
      );
      expect(refused.code).toBe(-32003);
      expect(refused.data).toMatchObject({ reason: 'read_only_token', tool: 'svc_send_message' });
      expect((refused.data as any).hint).toMatch(/read-only/);
      const created = await mcpError(client.callTool({ name: 'svc_create_project', arguments: { name: 'Nope' } }));
      expect(created.data).toMatchObject({ reason: 'read_only_token' });
      // Nothing was written.
      const after = await client.callTool({ name: 'svc_get_session', arguments: { projectId } });
      expect((after.structuredContent as any).hasActiveWorkflows).toBe(false);
      expect(
        ((await client.callTool({ name: 'svc_list_projects', arguments: {} })).structuredContent as any).projects,
      ).toHaveLength(1);
    });
  }

  it('lists and refuses the same way on the 2026-07-28 era (SDK v2 client)', async () => {
    const { tools } = await v2.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    const error = await v2.callTool({ name: 'svc_cancel_workflow', arguments: { projectId } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32003);
    expect((error as ProtocolError).data).toMatchObject({ reason: 'read_only_token', tool: 'svc_cancel_workflow' });
  });

  it('leaves a read-write token of the same user every tool', async () => {
    const writer = await httpClient(server.mcpUrl, server.token('alice'));
    try {
      expect((await writer.listTools()).tools).toHaveLength(7);
    } finally {
      await writer.close();
    }
  });
});
