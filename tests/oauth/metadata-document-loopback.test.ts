/**
 * Client ID Metadata Documents on a loopback host (docs/security.md "Sign in with OAuth"): a server whose
 * public URL is not on loopback never fetches one, so that whoever opens its authorization page
 * cannot make it GET any URL of its own loopback interface; a server on loopback still does
 * (local hosts identify themselves that way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers.js';
import { authorizeUrl, loopbackServer, pkce, type LoopbackServer } from './oauth-helpers.js';

let internal: LoopbackServer;
let publicServer: TestServer;
let localServer: TestServer;

beforeAll(async () => {
  // A service on the server's own loopback; it answers with a valid-looking document for any path.
  internal = await loopbackServer((req, res) => {
    const clientId = `${internal.url}${req.url}`;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({ client_id: clientId, client_name: 'Loopback client', redirect_uris: ['http://127.0.0.1:9/cb'] }),
    );
  });
  publicServer = await startTestServer({ publicUrl: 'https://mcp.example.test' });
  localServer = await startTestServer();
});
afterAll(async () => {
  await publicServer.close();
  await localServer.close();
  await internal.close();
});

function authorize(server: TestServer, clientId: string) {
  return fetch(
    authorizeUrl(server.http.url, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9/cb',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 's',
    }),
    { redirect: 'manual' },
  );
}

describe('a client id on a loopback host', () => {
  it('is refused without a fetch by a server whose public URL is not on loopback', async () => {
    const res = await authorize(publicServer, `${internal.url}/admin/purge?confirm=yes`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    expect(internal.requests).toHaveLength(0);
  });

  it('is fetched by a server on loopback, and its consent page is shown', async () => {
    const res = await authorize(localServer, `${internal.url}/client.json`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Loopback client');
    expect(internal.requests.map((u) => u.pathname)).toEqual(['/client.json']);
  });
});
