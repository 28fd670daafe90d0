/**
 * Artifacts from their own origins: with an artifact listener next to the MCP listener, each
 * project's previews live on the project's own origin (`http://<project-id>.localhost:<port>/`),
 * keep that origin there (CSP sandbox with allow-same-origin, so a preview may use localStorage),
 * and nothing else is served on it (another project's artifact is 404, no MCP). The shared host
 * and the MCP listener serve the same paths sandboxed into an opaque origin. The path form
 * (`--artifact-origins shared`) runs every page in an opaque origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../src/transports/http-server.js';
import { listenHttp } from '../src/app.js';
import { PublicUrl } from '../src/services/public-url.js';
import { createProject, post, rawHttp, startTestServer, toolResult, waitIdle, type TestServer } from './helpers.js';

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

async function builtProject(token: string, name: string) {
  const project = await createProject(server.mcpUrl, token, { name });
  await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'build',
    kind: 'build',
  });
  const session = await waitIdle(server.mcpUrl, token, project.id);
  return { project, url: new URL(session.previewUrls.find((p: any) => p.platform === 'web').url) };
}

describe('artifact origins', () => {
  it("serves each project's previews from its own origin, with localStorage allowed, and nothing else there", async () => {
    const token = server.token('alice');
    const a = await builtProject(token, 'Origin A');
    const b = await builtProject(token, 'Origin B');
    expect(a.url.origin).toBe(`http://${a.project.id}.localhost:${artifacts.port}`);
    expect(b.url.origin).toBe(`http://${b.project.id}.localhost:${artifacts.port}`);
    expect(a.url.pathname).toMatch(/^\/previews\/[0-9a-f-]{36}\/$/);

    const own = await rawHttp(a.url.href);
    expect(own.status).toBe(200);
    expect(own.headers['content-security-policy']).toContain('allow-same-origin');

    // Project A's preview on project B's origin, and anything but artifacts on a project origin: 404.
    expect((await rawHttp(`${b.url.origin}${a.url.pathname}`)).status).toBe(404);
    expect((await rawHttp(`${a.url.origin}/updates/d/${a.url.pathname.split('/')[2]}`)).status).toBe(404);
    // A project origin under a host name that is not ours is refused.
    expect(
      (
        await rawHttp(`${artifacts.url}${a.url.pathname}`, {
          headers: { Host: `${a.project.id}.evil.example:${artifacts.port}` },
        })
      ).status,
    ).toBe(403);

    // The shared host and the MCP listener serve the path form in an opaque origin.
    for (const base of [artifacts.url, server.http.url]) {
      const shared = await rawHttp(`${base}${a.url.pathname}`);
      expect(shared.status).toBe(200);
      expect(shared.headers['content-security-policy']).toContain('sandbox');
      expect(shared.headers['content-security-policy']).not.toContain('allow-same-origin');
    }

    const mcp = await post(`${artifacts.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, token);
    expect(mcp.status).toBe(404);
  });

  it('--artifact-origins shared keeps the path form, every page in an opaque origin', async () => {
    const shared = await startTestServer({ builder: 'scripted', artifactOrigins: 'shared' });
    const listener = await listenHttp(shared.app, {
      host: '127.0.0.1',
      port: 0,
      serveMcp: false,
      artifactOrigin: true,
    });
    try {
      const token = shared.token('bob');
      const project = await createProject(shared.mcpUrl, token, { name: 'Shared' });
      await toolResult(shared.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'build',
        kind: 'build',
      });
      const session = await waitIdle(shared.mcpUrl, token, project.id);
      const url = new URL(session.previewUrls[0].url);
      expect(url.origin).toBe(listener.url);
      const page = await rawHttp(url.href);
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toMatch(/^sandbox /);
      expect(page.headers['content-security-policy']).not.toContain('allow-same-origin');
      // No project origins in this mode.
      expect((await rawHttp(`http://${project.id}.localhost:${listener.port}${url.pathname}`)).status).toBe(403);
    } finally {
      await listener.close();
      await shared.close();
    }
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

  it('gives web artifacts one origin per project: <id>.localhost on addresses, <id>.<artifact host> behind --artifact-url', () => {
    const id = '0b7c9d3e-1f2a-4b5c-8d6e-7f8091a2b3c4';
    const plain = new PublicUrl();
    plain.bound('127.0.0.1', 3333);
    plain.artifactsBound('127.0.0.1', 3334);
    expect(plain.artifactBaseOf({ projectId: id, platform: 'web' })).toBe(`http://${id}.localhost:3334`);
    // Native deployments stay on the shared host, which phones reach.
    expect(plain.artifactBaseOf({ projectId: id, platform: 'ios' })).toBe('http://127.0.0.1:3334');
    expect(plain.projectOfHost(`${id}.localhost:3334`)).toBe(id);
    expect(plain.projectOfHost(`${id}.example.com`)).toBeNull();
    expect(plain.projectOfHost('127.0.0.1:3334')).toBeNull();
    expect(plain.previewFrameSource()).toBe('http://*.localhost:3334');

    const wildcard = new PublicUrl('https://builder.example.com', 'https://artifacts.example.com');
    expect(wildcard.artifactBaseOf({ projectId: id, platform: 'web' })).toBe(`https://${id}.artifacts.example.com`);
    expect(wildcard.projectOfHost(`${id}.artifacts.example.com`)).toBe(id);
    expect(wildcard.previewFrameSource()).toBe('https://*.artifacts.example.com');

    const shared = new PublicUrl('https://builder.example.com', 'https://artifacts.example.com', 'shared');
    expect(shared.artifactBaseOf({ projectId: id, platform: 'web' })).toBe('https://artifacts.example.com');
    expect(shared.projectOfHost(`${id}.artifacts.example.com`)).toBeNull();
  });
});
