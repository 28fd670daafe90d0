/**
 * Artifacts from their own origin: with an artifact listener next to the MCP listener, preview
 * links point at it, its pages keep their origin (CSP sandbox with allow-same-origin, so a preview
 * may use localStorage), and it answers no MCP. The MCP listener still serves artifacts, sandboxed
 * into an opaque origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../src/transports/http-server.js';
import { listenHttp } from '../src/app.js';
import { createProject, post, startTestServer, toolResult, waitIdle, type TestServer } from './helpers.js';

let server: TestServer;
let artifacts: RunningHttpServer;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
});

afterAll(async () => {
  await artifacts?.close();
  await server?.close();
});

describe('artifact origin', () => {
  it('serves previews from their own origin, with localStorage allowed, and no MCP there', async () => {
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token, { name: 'Origin App' });
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'build', kind: 'build' });
    const session = await waitIdle(server.mcpUrl, token, project.id);
    const url = new URL(session.previewUrls[0].url);
    expect(url.origin).toBe(artifacts.url);

    const own = await fetch(url);
    expect(own.status).toBe(200);
    expect(own.headers.get('content-security-policy')).toContain('allow-same-origin');

    const shared = await fetch(`${server.http.url}${url.pathname}`);
    expect(shared.status).toBe(200);
    expect(shared.headers.get('content-security-policy')).not.toContain('allow-same-origin');

    const mcp = await post(`${artifacts.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, token);
    expect(mcp.status).toBe(404);
  });
});
