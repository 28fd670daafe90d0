/**
 * A host that speaks MCP OAuth (MCP spec 2025-11-25, "Authorization") connects to the spawned bin
 * with only its URL: the SDK client gets a 401, discovers the protected resource metadata
 * (RFC 9728) and the authorization server metadata (RFC 8414), registers (RFC 7591, or a Client
 * ID Metadata Document), and the test plays the browser on the consent page. Then every tool works
 * with the OAuth access token, and refresh tokens rotate; when an access token expires (a server
 * in this process with a shortened lifetime) the SDK client refreshes on its own. See
 * docs/security.md#sign-in-with-oauth.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_PLANS, startTestServer, tempDir, waitFor } from '../helpers.js';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from '../bin-helpers.js';
import {
  approveInBrowser,
  connectUntilRedirect,
  hasInput,
  loopbackCertificate,
  loopbackServer,
  mcpStatus,
  MemoryOAuthProvider,
  oauthClient,
  openConsent,
  tokenRequest,
  type LoopbackServer,
  type RegisteredClient,
} from './oauth-helpers.js';

const REDIRECT = 'https://host.example.test/oauth/callback';

let dataDir: string;
let server: SpawnedServer;
let issuer: string;
let apiToken: string;
/** Serves the Client ID Metadata Document over https on 127.0.0.1 (null when openssl is missing). */
let metadataHost: LoopbackServer | null = null;
let metadataUrl = '';

beforeAll(async () => {
  dataDir = tempDir();
  apiToken = cliToken(dataDir, 'alice');
  writeFileSync(join(dataDir, 'plans.json'), JSON.stringify(GENEROUS_PLANS));
  const cert = loopbackCertificate(dataDir);
  if (cert) {
    metadataHost = await loopbackServer((req, res) => {
      if (req.url !== '/oauth/client.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: metadataUrl,
          client_name: 'Metadata Document Host',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    }, cert);
    metadataUrl = `${metadataHost.url}/oauth/client.json`;
  }
  // The server trusts the test's self-signed certificate, as it would trust a host's real one.
  server = await spawnHttpServer(
    dataDir,
    ['--scripted-step-ms', '20', '--plans', join(dataDir, 'plans.json')],
    cert ? { NODE_EXTRA_CA_CERTS: cert.certFile } : {},
  );
  issuer = server.url;
});
afterAll(async () => {
  await server?.stop();
  await metadataHost?.close();
});

/** A structured tool result through the SDK client (output checked by it against outputSchema). */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  return result.structuredContent;
}

/** Runs the whole flow for `provider` with `credential` on the consent page; returns the connected client. */
async function authorize(provider: MemoryOAuthProvider, credential: string): Promise<Client> {
  const first = oauthClient(server.mcpUrl, provider);
  const url = await connectUntilRedirect(first.client, first.transport, provider);
  const code = await approveInBrowser(issuer, url, credential);
  await first.transport.finishAuth(code);
  const second = oauthClient(server.mcpUrl, provider);
  await second.client.connect(second.transport);
  return second.client;
}

describe('discovery', () => {
  it('a 401 on /mcp names the protected resource metadata, which names this server as the authorization server', async () => {
    const res = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe(-32001);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp"`);
    const presented = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: 'Bearer svc_at_not-a-token',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(presented.status).toBe(401);
    expect(presented.headers.get('www-authenticate')).toContain('error="invalid_token"');

    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const prm = await fetch(`${issuer}${path}`);
      expect(prm.status, path).toBe(200);
      expect(await prm.json()).toMatchObject({ resource: `${issuer}/mcp`, authorization_servers: [issuer] });
    }
    const as = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
    expect(as.status).toBe(200);
    const meta = (await as.json()) as any;
    expect(meta).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      revocation_endpoint: `${issuer}/revoke`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      client_id_metadata_document_supported: true,
    });
    expect([...meta.grant_types_supported].sort()).toEqual(['authorization_code', 'refresh_token']);
  });
});

describe('the SDK client connects with only the URL', () => {
  let provider: MemoryOAuthProvider;
  let client: Client;

  it('registers, shows the consent page, gets a code for an API token, and connects', async () => {
    provider = new MemoryOAuthProvider(REDIRECT, 'Claude Test Host');
    const { client: c1, transport: t1 } = oauthClient(server.mcpUrl, provider);
    const url = await connectUntilRedirect(c1, t1, provider);
    expect(url.origin + url.pathname).toBe(`${issuer}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: REDIRECT,
      resource: `${issuer}/mcp`,
    });
    expect(url.searchParams.get('state')).toBe(provider.states.at(-1));
    // Dynamic registration gave the client an id the authorize request carries.
    expect(url.searchParams.get('client_id')).toBe(provider.clientInformation()!.client_id);

    const page = await openConsent(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBeTruthy();
    expect(page.html).toContain('Claude Test Host');
    expect(page.html).toContain('host.example.test');
    expect(page.html).toMatch(/every tool of this server/i);
    expect(page.html).toMatch(/<form[^>]*method="post"[^>]*action="\/authorize\/consent"/i);
    expect(page.request).toBeTruthy();
    expect(page.csrf).toBeTruthy();
    expect(hasInput(page.html, 'credential')).toBe(true);
    expect(page.html).toMatch(/<button[^>]*name="decision"[^>]*value="approve"/);
    expect(page.html).toMatch(/<button[^>]*name="decision"[^>]*value="deny"/);

    const code = await approveInBrowser(issuer, url, apiToken);
    await t1.finishAuth(code);
    const tokens = provider.tokens()!;
    expect(tokens.access_token).toMatch(/^svc_at_/);
    expect(tokens.refresh_token).toMatch(/^svc_rt_/);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBeGreaterThan(0);

    const next = oauthClient(server.mcpUrl, provider);
    client = next.client;
    await client.connect(next.transport);
  });

  it('calls every one of the seven tools as the user who approved', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(7);

    const project = await call(client, 'svc_create_project', {
      name: 'Via OAuth',
      description: 'Connected with only the URL',
    });
    expect(project).toMatchObject({ name: 'Via OAuth' });
    expect(await call(client, 'svc_get_project', { projectId: project.id })).toEqual(project);
    // The same user as the API token: its projects are the OAuth client's projects.
    const listed = await call(client, 'svc_list_projects');
    expect(listed.projects.map((p: any) => p.id)).toContain(project.id);

    const build = await call(client, 'svc_send_message', {
      projectId: project.id,
      message: 'Build a weather app',
      kind: 'build',
    });
    expect(build).toMatchObject({ kind: 'build' });
    const idle = await waitFor(
      async () => {
        const s = await call(client, 'svc_get_session', { projectId: project.id });
        return s.hasActiveWorkflows ? null : s;
      },
      30_000,
      'the build to finish',
    );
    expect(idle.lastWorkflow).toMatchObject({ id: build.workflowId, status: 'completed' });
    const messages = await call(client, 'svc_get_messages', { projectId: project.id, limit: 50 });
    expect(messages.messages.length).toBeGreaterThan(1);

    // A deploy waits on its app-identifier question: a workflow that is certainly still active to cancel.
    const deploy = await call(client, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy it',
      kind: 'deploy',
    });
    await waitFor(
      async () => (await call(client, 'svc_get_session', { projectId: project.id })).pendingQuestion,
      30_000,
      'the deploy question',
    );
    const cancelled = await call(client, 'svc_cancel_workflow', {
      projectId: project.id,
      workflowId: deploy.workflowId,
    });
    expect(cancelled).toMatchObject({ workflowId: deploy.workflowId, status: 'cancelled', cancelled: true });
  });

  it('refresh: the token endpoint rotates the refresh token, and the new access token works', async () => {
    const before = provider.tokens()!;
    const info = provider.clientInformation() as RegisteredClient;
    const refreshed = await tokenRequest(issuer, info, {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
      resource: `${issuer}/mcp`,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.access_token).toMatch(/^svc_at_/);
    expect(refreshed.body.refresh_token).toMatch(/^svc_rt_/);
    expect(refreshed.body.access_token).not.toBe(before.access_token);
    expect(refreshed.body.refresh_token).not.toBe(before.refresh_token);
    expect(await mcpStatus(server.mcpUrl, refreshed.body.access_token)).toBe(200);
    provider.saveTokens({ ...before, ...refreshed.body });
    // The SDK client keeps working with the rotated tokens.
    expect((await call(client, 'svc_list_projects')).projects.length).toBeGreaterThan(0);
  });

  it('refresh through the SDK: a refused access token makes the client refresh and retry on its own', async () => {
    const before = provider.tokens()!;
    // As if the access token had expired: the server refuses it, the SDK refreshes with the refresh token.
    provider.saveTokens({ ...before, access_token: 'svc_at_expired-or-unknown' });
    const fresh = oauthClient(server.mcpUrl, provider);
    await fresh.client.connect(fresh.transport);
    expect((await call(fresh.client, 'svc_list_projects')).projects.length).toBeGreaterThan(0);
    const after = provider.tokens()!;
    expect(after.access_token).toMatch(/^svc_at_/);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    // No second trip through the consent page was needed.
    expect(provider.authorizationUrls).toHaveLength(1);
    await fresh.client.close();
    await client.close();
  });

  it('approves with a one-time login code from the CLI, which works once', async () => {
    const made = runCli(['login-code', '--user', 'alice', '--data-dir', dataDir]);
    expect(made.status, made.stderr).toBe(0);
    const loginCode = made.stdout.trim().split('\n').at(-1)!;
    expect(loginCode.length).toBeGreaterThan(7);
    const provider2 = new MemoryOAuthProvider(REDIRECT, 'Second Host');
    const second = await authorize(provider2, loginCode);
    const listed = await call(second, 'svc_list_projects');
    expect(listed.projects.map((p: any) => p.name)).toContain('Via OAuth');
    await second.close();

    // Used once: the consent page refuses it the second time and issues nothing.
    const provider3 = new MemoryOAuthProvider(REDIRECT, 'Third Host');
    const third = oauthClient(server.mcpUrl, provider3);
    const url = await connectUntilRedirect(third.client, third.transport, provider3);
    await expect(approveInBrowser(issuer, url, loginCode)).rejects.toThrow(/answered 401/);

    expect(runCli(['login-code', '--user', 'nobody-here', '--data-dir', dataDir]).status).toBe(1);
  });

  it('token list shows the grants (never a whole token); never logs a token', () => {
    const listed = runCli(['token', 'list', '--user', 'alice', '--data-dir', dataDir]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('Claude Test Host');
    const tokens = provider.tokens()!;
    for (const secret of [tokens.access_token, tokens.refresh_token!, apiToken]) {
      expect(listed.stdout).not.toContain(secret);
      expect(server.stderr()).not.toContain(secret);
    }
  });
});

describe('a Client ID Metadata Document instead of registration', () => {
  it('the SDK client uses its https metadata URL as client_id; the server fetches it and shows its name', async (ctx) => {
    if (!metadataHost) {
      process.stderr.write(
        '\n*** SKIPPING the Client ID Metadata Document flow: no openssl to make a loopback https certificate. ***\n',
      );
      return ctx.skip();
    }
    const provider = new MemoryOAuthProvider(REDIRECT, 'Metadata Document Host', metadataUrl);
    const { client, transport } = oauthClient(server.mcpUrl, provider);
    const url = await connectUntilRedirect(client, transport, provider);
    expect(url.searchParams.get('client_id')).toBe(metadataUrl);
    const page = await openConsent(url);
    expect(page.status, page.html.slice(0, 300)).toBe(200);
    expect(page.html).toContain('Metadata Document Host');
    expect(metadataHost.requests.some((r) => r.pathname === '/oauth/client.json')).toBe(true);
    const code = await approveInBrowser(issuer, url, apiToken);
    await transport.finishAuth(code);
    const next = oauthClient(server.mcpUrl, provider);
    await next.client.connect(next.transport);
    expect((await call(next.client, 'svc_list_projects')).projects.length).toBeGreaterThan(0);
    await next.client.close();
  });
});

describe('an access token that really expires (on a clock the test moves, in process)', () => {
  it('the SDK client refreshes on the 401 and goes on, without the consent page', async () => {
    let offsetMs = 0;
    const short = await startTestServer({ clock: () => new Date(Date.now() + offsetMs) });
    try {
      const provider = new MemoryOAuthProvider(REDIRECT, 'Expiring Host');
      const first = oauthClient(short.mcpUrl, provider);
      const url = await connectUntilRedirect(first.client, first.transport, provider);
      await first.transport.finishAuth(await approveInBrowser(short.http.url, url, short.token('erin')));
      const next = oauthClient(short.mcpUrl, provider);
      await next.client.connect(next.transport);
      const before = provider.tokens()!;
      expect(before.expires_in).toBe(3600);
      // Past the access token's expiry (the refresh token lives 30 days): the old one is refused.
      offsetMs += 3601_000;
      expect(await mcpStatus(short.mcpUrl, before.access_token)).toBe(401);
      expect((await call(next.client, 'svc_list_projects')).projects).toEqual([]);
      expect(provider.tokens()!.access_token).not.toBe(before.access_token);
      expect(provider.tokens()!.refresh_token).not.toBe(before.refresh_token);
      expect(provider.authorizationUrls).toHaveLength(1);
      await next.client.close();
    } finally {
      await short.close();
    }
  });
});
