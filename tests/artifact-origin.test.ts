/**
 * Artifacts from their own origin: with an artifact listener next to the MCP listener, preview
 * links point at it, its pages keep their origin (CSP sandbox with allow-same-origin, so a preview
 * may use localStorage), and it answers no MCP. The MCP listener still serves artifacts, sandboxed
 * into an opaque origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../src/transports/http-server.js';
import { listenHttp } from '../src/app.js';
import { PublicUrl } from '../src/services/public-url.js';
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

describe('artifact base URL', () => {
  it('follows --artifact-url, else the artifact listener, keeping a configured public host', () => {
    const plain = new PublicUrl();
    plain.bound('127.0.0.1', 3333);
    plain.artifactsBound('127.0.0.1', 3334);
    expect([plain.get(), plain.artifacts()]).toEqual(['http://127.0.0.1:3333', 'http://127.0.0.1:3334']);

    const lan = new PublicUrl('http://192.168.1.20:3333/');
    lan.artifactsBound('0.0.0.0', 3334);
    expect(lan.artifacts()).toBe('http://192.168.1.20:3334');

    const proxied = new PublicUrl('https://builder.example.com');
    proxied.artifactsBound('127.0.0.1', 3334);
    expect(proxied.artifacts()).toBe('https://builder.example.com');

    const configured = new PublicUrl('https://builder.example.com', 'https://previews.example.net/');
    configured.artifactsBound('127.0.0.1', 3334);
    expect(configured.artifacts()).toBe('https://previews.example.net');
  });
});
