/**
 * `mcp-remote` (the stdio-to-HTTP bridge of README "Connect an MCP host"), driven over stdio by an
 * SDK Client and pointed at the HTTP server with a Bearer header: tool errors reach the client
 * with their own code and data, not as a broken transport.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, ROOT, startTestServer, tempDir, type TestServer, mcpError } from './helpers.js';

let server: TestServer;
let client: Client;
let bobsPrivate: string;
const configDir = tempDir('mbm-mcp-remote-');

beforeAll(async () => {
  server = await startTestServer();
  const alice = server.token('alice');
  bobsPrivate = (await createProject(server.mcpUrl, server.token('bob'), { name: 'Bob private' })).id;
  client = new Client({ name: 'mcp-remote-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        join(ROOT, 'node_modules/mcp-remote/dist/proxy.js'),
        server.mcpUrl,
        '--header',
        `Authorization: Bearer ${alice}`,
      ],
      // mcp-remote keeps OAuth state in its config dir: a private one per run.
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

describe('mcp-remote bridge', () => {
  it('lists the tools and calls one', async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('svc_create_project');
    const created = await client.callTool({ name: 'svc_create_project', arguments: { name: 'Via bridge' } });
    expect(created.structuredContent).toMatchObject({ name: 'Via bridge', visibility: 'private' });
  });

  it('passes -32602, -32004, -32003 and -32601 through with their code and data', async () => {
    const invalid = await mcpError(
      client.callTool({ name: 'svc_get_project', arguments: { projectId: 'not-a-uuid' } }),
    );
    expect(invalid.code).toBe(-32602);
    expect(invalid.data).toMatchObject({ issues: [expect.objectContaining({ parameter: 'projectId' })] });
    expect(
      (
        await mcpError(
          client.callTool({
            name: 'svc_get_project',
            arguments: { projectId: '00000000-0000-4000-8000-000000000000' },
          }),
        )
      ).code,
    ).toBe(-32004);
    expect(
      (await mcpError(client.callTool({ name: 'svc_get_project', arguments: { projectId: bobsPrivate } }))).code,
    ).toBe(-32003);
    expect((await mcpError(client.callTool({ name: 'svc_nope', arguments: {} }))).code).toBe(-32601);
  });
});
