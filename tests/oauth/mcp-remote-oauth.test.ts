/**
 * `mcp-remote` (README "Connect an MCP host") given only the server's URL: it finds the
 * authorization server from the 401, registers itself, and waits for the sign-in; the test plays
 * the person at the browser (the consent form, then the redirect to mcp-remote's callback), and
 * the bridge then serves the tools with the OAuth access token it received.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startTestServer, tempDir, waitFor, type TestServer } from '../helpers.js';

let server: TestServer;
const configDir = tempDir('mbm-mcp-remote-oauth-');

/** A port that was free a moment ago, for mcp-remote's OAuth callback listener. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** True when something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

describe('mcp-remote with only the URL', () => {
  it('signs in with OAuth through the consent page, then lists and calls tools', async () => {
    const apiToken = server.token('maya');
    const callbackPort = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(ROOT, 'node_modules/mcp-remote/dist/proxy.js'),
        server.mcpUrl,
        String(callbackPort),
        '--host',
        '127.0.0.1',
      ],
      // A private config dir (mcp-remote keeps tokens there); BROWSER=true: no browser is launched.
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'mcp-remote-oauth-test', version: '1.0.0' });
    const connected = client.connect(transport);
    try {
      const authorizeUrl = await waitFor(
        () => /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(stderr)?.[1],
        30_000,
        `mcp-remote to print the authorization URL (stderr: ${stderr})`,
      );
      const page = await fetch(authorizeUrl);
      expect(page.status).toBe(200);
      const html = await page.text();
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
      const decided = await fetch(`${server.http.url}/authorize/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          request: field('request'),
          csrf: field('csrf'),
          credential: apiToken,
          decision: 'approve',
        }),
      });
      expect(decided.status).toBe(302);
      const callback = decided.headers.get('location')!;
      expect(callback.startsWith(`http://127.0.0.1:${callbackPort}/`)).toBe(true);
      // mcp-remote may print the URL before its callback listener is up: wait until it listens.
      await waitFor(
        () => listening(callbackPort),
        30_000,
        `mcp-remote's callback listener on ${callbackPort} (stderr: ${stderr})`,
      );
      expect((await fetch(callback)).status).toBe(200);
      await connected;

      expect((await client.listTools()).tools).toHaveLength(7);
      const created = await client.callTool({
        name: 'svc_create_project',
        arguments: { name: 'Signed in through mcp-remote' },
      });
      expect(created.structuredContent).toMatchObject({ name: 'Signed in through mcp-remote', visibility: 'private' });
      const grants = await server.app.oauthGrants.list();
      expect(grants).toHaveLength(1);
      expect(grants[0]).toMatchObject({ user: 'maya', state: 'active' });
    } finally {
      await client.close();
    }
  });
});
