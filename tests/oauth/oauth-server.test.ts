/**
 * The OAuth authorization server (docs/security.md "Sign in with OAuth"), driven with raw HTTP as a host
 * and a browser would: metadata documents, the 401 that points to them, one whole sign-in
 * (register -> consent page -> approve -> token -> tools/list with the access token), refresh
 * rotation, the login-code command, and token list / revoke of a grant.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from '../bin-helpers.js';
import { displayPrefix, hashToken } from '../../src/auth/api-token.js';
import { post, startTestServer, tempDir, type TestServer } from '../helpers.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

/** A PKCE pair (RFC 7636, S256). */
function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The value of the hidden input `name` in a consent page. */
function hidden(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no ${name} field in: ${html}`);
  return match[1]!;
}

async function register(base: string, name = 'Test Host'): Promise<string> {
  const res = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** Opens the consent page for a new authorization request. */
async function openConsent(base: string, clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    resource: `${base}/mcp`,
    ...extra,
  });
  return fetch(`${base}/authorize?${query}`, { redirect: 'manual' });
}

async function submitConsent(base: string, html: string, fields: Record<string, string>) {
  return fetch(`${base}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request: hidden(html, 'request'), csrf: hidden(html, 'csrf'), ...fields }),
  });
}

/** A token endpoint answer: tokens (RFC 6749 section 5.1) or an error (section 5.2). */
interface TokenBody {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  error?: string;
}

async function tokenRequest(base: string, params: Record<string, string>) {
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as TokenBody };
}

/** Signs `credential`'s user in as a new client: the token response. */
async function signIn(base: string, credential: string) {
  const clientId = await register(base);
  const { verifier, challenge } = pkce();
  const page = await openConsent(base, clientId, challenge);
  const html = await page.text();
  const decided = await submitConsent(base, html, { credential, decision: 'approve' });
  expect(decided.status).toBe(302);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const tokens = await tokenRequest(base, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource: `${base}/mcp`,
  });
  expect(tokens.status).toBe(200);
  return { clientId, ...tokens.body };
}

describe('OAuth authorization server (in process)', () => {
  let server: TestServer;
  let base: string;
  let apiToken: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = server.http.url;
    apiToken = server.token('olivia');
  });
  afterAll(() => server.close());

  it('serves protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414)', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    }
    const res = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      revocation_endpoint: `${base}/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
      client_id_metadata_document_supported: true,
    });
  });

  it('answers 401 on /mcp with WWW-Authenticate naming the resource metadata', async () => {
    const metadata = `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;
    const missing = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(`Bearer ${metadata}`);
    const bad = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'svc_at_nope');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(`Bearer ${metadata}, error="invalid_token"`);
  });

  it('signs a host in: register, consent page, approve, token, then tools/list with the access token', async () => {
    const clientId = await register(base, 'Host <script>x</script>');
    const { verifier, challenge } = pkce();
    const page = await openConsent(base, clientId, challenge);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('Host &lt;script&gt;x&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('127.0.0.1:9');
    expect(html).toContain('<form method="post" action="/authorize/consent">');
    expect(html).toContain('name="credential"');
    expect(html).toContain('<button class="approve" type="submit" name="decision" value="approve">');

    const decided = await submitConsent(base, html, { credential: apiToken, decision: 'approve' });
    expect(decided.status).toBe(302);
    const location = new URL(decided.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('st-123');
    const code = location.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const tokens = await tokenRequest(base, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: `${base}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
    expect(tokens.body.access_token).toMatch(/^svc_at_/);
    expect(tokens.body.refresh_token).toMatch(/^svc_rt_/);
    expect(Number(tokens.body.expires_in)).toBe(3600);

    const listed = await post(server.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, tokens.body.access_token);
    expect(listed.status).toBe(200);
    expect((listed.json as { result: { tools: unknown[] } }).result.tools).toHaveLength(7);
    const created = await post(
      server.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'svc_create_project', arguments: { name: 'Signed in' } },
      },
      tokens.body.access_token,
    );
    expect(created.status).toBe(200);
    const project = JSON.parse(
      (created.json as { result: { content: { text: string }[] } }).result.content[0]!.text,
    ) as { ownerId?: string };
    expect(project).toBeTruthy();

    // The code was single use.
    const again = await tokenRequest(base, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    // ... and its replay revoked what it had issued.
    const after = await post(server.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, tokens.body.access_token);
    expect(after.status).toBe(401);
  });

  it('rotates refresh tokens; a used refresh token revokes the whole grant', async () => {
    const first = await signIn(base, apiToken);
    const second = await tokenRequest(base, {
      grant_type: 'refresh_token',
      client_id: first.clientId,
      refresh_token: first.refresh_token,
    });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(
      (await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, second.body.access_token)).status,
    ).toBe(200);

    const replay = await tokenRequest(base, {
      grant_type: 'refresh_token',
      client_id: first.clientId,
      refresh_token: first.refresh_token,
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect(
      (await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, second.body.access_token)).status,
    ).toBe(401);
    const rotated = await tokenRequest(base, {
      grant_type: 'refresh_token',
      client_id: first.clientId,
      refresh_token: second.body.refresh_token,
    });
    expect(rotated.status).toBe(400);
  });

  it('refuses a request without state or for another resource, and a bad credential on the consent page', async () => {
    const clientId = await register(base);
    const { challenge } = pkce();
    const noState = await openConsent(base, clientId, challenge, { state: '' });
    expect(noState.status).toBe(302);
    expect(new URL(noState.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const otherResource = await openConsent(base, clientId, challenge, { resource: 'https://elsewhere.example/mcp' });
    expect(new URL(otherResource.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');

    const html = await (await openConsent(base, clientId, challenge)).text();
    const refused = await submitConsent(base, html, { credential: 'svc_not-a-token', decision: 'approve' });
    expect(refused.status).toBe(401);
    const again = await refused.text();
    expect(again).toContain('role="alert"');
    const badCsrf = await fetch(`${base}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        request: hidden(again, 'request'),
        csrf: 'forged',
        credential: apiToken,
        decision: 'approve',
      }),
    });
    expect(badCsrf.status).toBe(400);
    const denied = await submitConsent(base, again, { decision: 'deny' });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('st-123');
    expect(location.searchParams.get('code')).toBeNull();
    const reused = await submitConsent(base, again, { credential: apiToken, decision: 'approve' });
    expect(reused.status).toBe(400);
  });

  it('knows a client by its Client ID Metadata Document (http on loopback), within the size cap, never from a private address', async () => {
    let fetched = 0;
    const documents = createServer((req, res) => {
      fetched++;
      if (req.url === '/big.json')
        return void res.end(
          JSON.stringify({ client_id: `${origin}/big.json`, redirect_uris: [REDIRECT], pad: 'x'.repeat(70_000) }),
        );
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ client_id: `${origin}${req.url}`, client_name: 'Document Client', redirect_uris: [REDIRECT] }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
    try {
      const { challenge } = pkce();
      const page = await openConsent(base, `${origin}/client.json`, challenge);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Document Client');
      // Cached: a second authorization does not fetch it again.
      expect((await openConsent(base, `${origin}/client.json`, challenge)).status).toBe(200);
      expect(fetched).toBe(1);
      const big = await openConsent(base, `${origin}/big.json`, challenge);
      expect(big.status).toBe(400);
      expect(((await big.json()) as { error: string }).error).toBe('invalid_client');
      // Never fetched from a private or link-local address (server-side request forgery).
      for (const clientId of [
        'https://10.1.2.3/client.json',
        'https://169.254.169.254/client.json',
        'https://[fe80::1]/client.json',
      ]) {
        expect((await openConsent(base, clientId, challenge)).status).toBe(400);
      }
    } finally {
      documents.close();
    }
  });

  it('accepts a one-time login code once', async () => {
    const code = await server.app.loginCodes.create('olivia');
    const tokens = await signIn(base, code);
    expect(tokens.access_token).toMatch(/^svc_at_/);
    const clientId = await register(base);
    const html = await (await openConsent(base, clientId, pkce().challenge)).text();
    expect((await submitConsent(base, html, { credential: code, decision: 'approve' })).status).toBe(401);
  });

  it('accepts an API token whose random part happens to begin like an OAuth token (svc_at_, svc_rt_)', async () => {
    const user = await server.app.tokens.ensureUser('olivia');
    for (const prefix of ['svc_at_', 'svc_rt_']) {
      const token = prefix + randomBytes(32).toString('base64url').slice(3);
      await server.app.store.repos.tokens.insert({
        id: randomUUID(),
        userId: user.id,
        tokenHash: hashToken(token),
        displayPrefix: displayPrefix(token),
        createdAt: new Date().toISOString(),
        expiresAt: null,
        revokedAt: null,
        readOnly: false,
      });
      const tokens = await signIn(base, token);
      expect(tokens.access_token, prefix).toMatch(/^svc_at_/);
    }
  });
});

describe('OAuth callers and limits', () => {
  it('counts the request rate per user: two grants of one user share one limit', async () => {
    const server = await startTestServer({
      plans: { free: { requestsPerMinute: 3, projectCreationsPerHour: 100, maxProjects: 100 } },
    });
    try {
      const credential = server.token('rita');
      const base = server.http.url;
      const one = await signIn(base, credential);
      const two = await signIn(base, await server.app.loginCodes.create('rita'));
      const call = (token: string) =>
        post(
          server.mcpUrl,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects', arguments: {} } },
          token,
        );
      const statuses = [];
      for (const token of [one.access_token, two.access_token, one.access_token, two.access_token]) {
        const res = await call(token);
        statuses.push((res.json as { error?: { code: number } }).error?.code ?? 'ok');
      }
      expect(statuses).toEqual(['ok', 'ok', 'ok', -32005]);
    } finally {
      await server.close();
    }
  });
});

describe('OAuth from the command line (spawned bin)', () => {
  let dataDir: string;
  let server: SpawnedServer;

  beforeAll(async () => {
    dataDir = tempDir();
    cliToken(dataDir, 'carol');
    server = await spawnHttpServer(dataDir);
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('login-code prints a code alone on the last line, for existing users only', async () => {
    const help = runCli(['login-code', '--help']);
    expect(help.stdout).toContain('--user');
    expect(help.stdout).toContain('--expires-in');
    const unknown = runCli(['login-code', '--user', 'nobody', '--data-dir', dataDir]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No user "nobody"');
    const out = runCli(['login-code', '--user', 'carol', '--expires-in', '5m', '--data-dir', dataDir]);
    expect(out.status).toBe(0);
    const code = out.stdout.trim().split('\n').at(-1)!;
    expect(code).toMatch(/^[0-9A-Z]{5}(-[0-9A-Z]{5}){4}$/);
    const tokens = await signIn(server.url, code);
    expect(
      (await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, tokens.access_token)).status,
    ).toBe(200);
  });

  it('token list shows grants and token revoke revokes a grant with all its tokens', async () => {
    const code = runCli(['login-code', '--user', 'carol', '--data-dir', dataDir]).stdout.trim().split('\n').at(-1)!;
    const tokens = await signIn(server.url, code);
    const listed = JSON.parse(
      runCli(['token', 'list', '--user', 'carol', '--json', '--data-dir', dataDir]).stdout,
    ) as Array<Record<string, string>>;
    expect(listed[0]!.kind).toBe('api_token');
    const grants = listed.filter((row) => row.kind === 'oauth_grant');
    expect(grants.length).toBeGreaterThanOrEqual(2);
    expect(grants.every((g) => g.client === 'Test Host' && g.user === 'carol' && g.state === 'active')).toBe(true);
    const table = runCli(['token', 'list', '--data-dir', dataDir]).stdout;
    expect(table).toContain('OAuth grants');
    expect(table).not.toContain(tokens.access_token);

    // The newest grant is the one just made.
    const grant = grants.at(-1)!;
    const revoked = runCli(['token', 'revoke', grant.id!, '--data-dir', dataDir]);
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toContain('Revoked OAuth grant');
    // Another process's revocation reaches the server's token cache within its read interval.
    const refused = async () =>
      (await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, tokens.access_token)).status === 401;
    await expect.poll(refused, { timeout: 120_000 }).toBe(true);
    const refresh = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      client_id: tokens.clientId,
      refresh_token: tokens.refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    const after = JSON.parse(
      runCli(['token', 'list', '--user', 'carol', '--json', '--data-dir', dataDir]).stdout,
    ) as Array<Record<string, string>>;
    expect(after.find((row) => row.id === grant.id)!.state).toBe('revoked');
    expect(runCli(['token', 'revoke', 'no-such-id', '--data-dir', dataDir]).status).toBe(1);
  });
});
