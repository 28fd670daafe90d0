/**
 * A 2026-07-28 request over streamable HTTP carries the standard request headers, and they must
 * agree with its body (docs/contract.md#protocol-versions; MCP 2026-07-28 "Standard Request
 * Headers"): a proxy that routes or authorizes on `Mcp-Name` sees what the server runs. A
 * `tools/call` whose `Mcp-Name` named another tool, or a request without `Mcp-Method` or
 * `MCP-Protocol-Version`, used to be served.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject, post, startTestServer, type TestServer } from './helpers.js';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.token('alice');
});
afterAll(async () => {
  await server.close();
});

const call = (name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: args, _meta: ENVELOPE },
});

it('refuses a tools/call whose Mcp-Name names another tool, and one without Mcp-Name, Mcp-Method or MCP-Protocol-Version', async () => {
  const project = await createProject(server.mcpUrl, token);
  const cases: Array<[string, Record<string, string>]> = [
    ['another tool', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'svc_list_projects' }],
    ['no Mcp-Name', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' }],
    ['no Mcp-Method', { 'mcp-protocol-version': MODERN, 'mcp-name': 'svc_get_project' }],
    ['no MCP-Protocol-Version', { 'mcp-method': 'tools/call', 'mcp-name': 'svc_get_project' }],
  ];
  for (const [label, headers] of cases) {
    const res = await post(server.mcpUrl, call('svc_get_project', { projectId: project.id }), token, headers);
    expect({ label, status: res.status, code: res.json?.error?.code }).toEqual({ label, status: 400, code: -32020 });
  }
});

it('serves a tools/call whose Mcp-Name agrees, plain or in its Base64 sentinel', async () => {
  const project = await createProject(server.mcpUrl, token);
  for (const name of ['svc_get_project', `=?base64?${Buffer.from('svc_get_project').toString('base64')}?=`]) {
    const res = await post(server.mcpUrl, call('svc_get_project', { projectId: project.id }), token, {
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    });
    expect(res.status).toBe(200);
    expect(res.json.result.structuredContent.id).toBe(project.id);
  }
});
