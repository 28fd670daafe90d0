/**
 * MCP 2026-07-28 beside 2025-11-25 (docs/contract.md#protocol-versions): a v2 SDK client pinned
 * to 2026-07-28 and a v1 SDK client (2025-11-25) against the real bin, over stdio (spawned) and
 * streamable HTTP (port 0). Both list the same seven tools and get the same results and errors,
 * call by call (one table, both eras); the raw HTTP cases show the era's own refusals.
 */
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { BIN, tempDir } from './helpers.js';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** What the table compares: a result without the era's `_meta`, or an error's code, message and data. */
type Answer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

interface EraClient {
  listTools(): Promise<{ tools: unknown[] }>;
  call(name: string, args: Record<string, unknown>): Promise<Answer>;
  close(): Promise<void>;
}

let dataDir: string;
let token: string;
let http: SpawnedServer;
const clients: Record<string, { v1: EraClient; v2: EraClient; v2Raw: ClientV2 }> = {};

function wrap(client: ClientV1 | ClientV2): EraClient {
  return {
    listTools: () => client.listTools() as Promise<{ tools: unknown[] }>,
    async call(name, args) {
      try {
        const { _meta: _ignored, ...result } = (await client.callTool({ name, arguments: args })) as Record<
          string,
          unknown
        >;
        return { result };
      } catch (error) {
        if (!(error instanceof McpError) && !(error instanceof ProtocolError)) throw error;
        // v1 puts "MCP error <code>: " before the server's message.
        return {
          error: { code: error.code, message: error.message.replace(/^MCP error -?\d+: /, ''), data: error.data },
        };
      }
    },
    close: () => client.close(),
  };
}

const stdioParams = () => ({
  command: process.execPath,
  args: [BIN, 'serve', '--data-dir', dataDir, '--builder', 'scripted', '--port', '0'],
  env: { ...(process.env as Record<string, string>), SVC_API_TOKEN: token },
  stderr: 'ignore' as const,
});

beforeAll(async () => {
  dataDir = tempDir();
  token = cliToken(dataDir, 'alice');
  http = await spawnHttpServer(dataDir);
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const v1Http = new ClientV1({ name: 'v1', version: '1' });
  await v1Http.connect(new HttpTransportV1(new URL(http.mcpUrl), { requestInit: auth }));
  const v2Http = new ClientV2({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await v2Http.connect(new HttpTransportV2(new URL(http.mcpUrl), { requestInit: auth }));
  const v1Stdio = new ClientV1({ name: 'v1', version: '1' });
  await v1Stdio.connect(new StdioTransportV1(stdioParams()));
  const v2Stdio = new ClientV2({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await v2Stdio.connect(new StdioTransportV2(stdioParams()));
  clients.http = { v1: wrap(v1Http), v2: wrap(v2Http), v2Raw: v2Http };
  clients.stdio = { v1: wrap(v1Stdio), v2: wrap(v2Stdio), v2Raw: v2Stdio };
});

afterAll(async () => {
  for (const pair of Object.values(clients)) {
    await pair.v1.close();
    await pair.v2.close();
  }
  await http?.stop();
});

describe.each(['http', 'stdio'])('a v2 client pinned to 2026-07-28 and a v1 client over %s', (transport) => {
  it('the v2 client negotiates 2026-07-28 by server/discover, which names the server and its instructions', () => {
    const client = clients[transport]!.v2Raw;
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const discover = client.getDiscoverResult()!;
    expect(discover.supportedVersions).toContain(MODERN);
    expect(discover.capabilities).toEqual({ tools: { listChanged: false } });
    expect(discover.instructions).toContain('svc_send_message');
    expect(discover._meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({
      name: 'mobile-builder-mcp',
      title: 'Mobile app builder',
    });
  });

  it('both list the same seven tools with the same schemas', async () => {
    const { v1, v2 } = clients[transport]!;
    const [old, modern] = await Promise.all([v1.listTools(), v2.listTools()]);
    expect(old.tools).toHaveLength(7);
    expect(modern.tools).toEqual(old.tools);
  });

  it('both get the same results and errors, call by call', async () => {
    const { v1, v2 } = clients[transport]!;
    const created = await v1.call('svc_create_project', { name: `Eras ${transport}` });
    expect(created).toHaveProperty('result');
    const projectId = (created as { result: { structuredContent: { id: string } } }).result.structuredContent.id;
    const table: Array<[string, Record<string, unknown>, string]> = [
      ['svc_get_project', { projectId }, 'result'],
      ['svc_get_session', { projectId }, 'result'],
      ['svc_get_messages', { projectId }, 'result'],
      ['svc_get_project', { projectId: 'not-a-uuid' }, '-32602'],
      ['svc_get_project', {}, '-32602'],
      ['svc_get_project', { projectId: '00000000-0000-4000-8000-000000000000' }, '-32004'],
      ['svc_cancel_workflow', { projectId, workflowId: '00000000-0000-4000-8000-000000000000' }, '-32004'],
      ['svc_send_message', { projectId, message: 'x', kind: 'nonsense' }, '-32602'],
      ['svc_nope', {}, '-32601'],
    ];
    for (const [name, args, expected] of table) {
      const [old, modern] = [await v1.call(name, args), await v2.call(name, args)];
      expect(modern, `${name} ${JSON.stringify(args)}`).toEqual(old);
      expect('result' in old ? 'result' : String(old.error.code), `${name} ${JSON.stringify(args)}`).toBe(expected);
    }
  });
});

describe('2026-07-28 over raw HTTP', () => {
  const post = (
    body: unknown,
    headers: Record<string, string>,
    auth = true,
  ): Promise<{ status: number; json(): Promise<any> }> =>
    fetch(http.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(auth && { authorization: `Bearer ${token}` }),
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('a tools/call carries resultType and the server identity; tools/list carries its cache fields', async () => {
    const call = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_list_projects', arguments: {}, _meta: ENVELOPE },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'svc_list_projects' },
    );
    expect(call.status).toBe(200);
    const body = await call.json();
    expect(body.result).toMatchObject({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mobile-builder-mcp' } },
      structuredContent: expect.any(Object),
    });
    const list = await (
      await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } },
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
      )
    ).json();
    expect(list.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    expect(list.result.tools).toHaveLength(7);
  });

  it("the era's own refusals: headers that disagree with the body, an incomplete envelope, an unknown revision, no token, an unknown method", async () => {
    const mismatch = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_list_projects', arguments: {}, _meta: ENVELOPE },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(mismatch.status).toBe(400);
    expect((await mismatch.json()).error.code).toBe(-32020);
    const incomplete = await post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(incomplete.status).toBe(400);
    expect((await incomplete.json()).error).toMatchObject({
      code: -32602,
      data: { envelope: { key: expect.any(String) } },
    });
    const future = { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    const unknown = await post(
      { jsonrpc: '2.0', id: 3, method: 'server/discover', params: { _meta: future } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
    );
    expect((await unknown.json()).error.code).toBe(-32020);
    const unsupported = await post(
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: {
          name: 'svc_list_projects',
          arguments: {},
          _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
        },
      },
      { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'svc_list_projects' },
    );
    expect((await unsupported.json()).error).toMatchObject({ code: -32022, data: { supported: [MODERN] } });
    const anonymous = await post(
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'svc_list_projects', arguments: {}, _meta: ENVELOPE },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'svc_list_projects' },
      false,
    );
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe(-32001);
    const method = await post(
      { jsonrpc: '2.0', id: 6, method: 'resources/list', params: { _meta: ENVELOPE } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/list' },
    );
    expect(method.status).toBe(200);
    expect((await method.json()).error).toEqual({ code: -32601, message: 'Method not found: resources/list' });
  });
});
