/**
 * What the authorization server refuses (OAuth 2.1, RFC 7636 PKCE, RFC 8707 resource indicators,
 * RFC 7009 revocation; docs/security.md#sign-in-with-oauth), with raw requests against the real server in this
 * process: each refusal is asserted together with the fact that nothing usable was issued.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startTestServer, waitFor, type TestServer } from '../helpers.js';
import {
  authorizeUrl,
  exchange,
  hasInput,
  inputValue,
  loopbackServer,
  mcpStatus,
  openConsent,
  pkce,
  rawCode,
  registerClient,
  submitConsent,
  tokenRequest,
  type RegisteredClient,
} from './oauth-helpers.js';

const REDIRECT = 'https://host.example.test/oauth/callback';
const OTHER_REDIRECT = 'https://host.example.test/oauth/other';

let server: TestServer;
let issuer: string;
let apiToken: string;
let client: RegisteredClient;

beforeAll(async () => {
  server = await startTestServer();
  issuer = server.http.url;
  apiToken = server.token('alice');
  client = await registerClient(issuer, [REDIRECT, OTHER_REDIRECT], 'Refusal Test Host');
});
afterAll(async () => {
  await server.close();
});

/** Fresh authorization parameters for `client` (override or drop any with `undefined`). */
function params(overrides: Record<string, string | undefined> = {}) {
  const { verifier, challenge } = pkce();
  return {
    verifier,
    query: {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: `${issuer}/mcp`,
      ...overrides,
    },
  };
}

/** Asserts a token endpoint refusal: a 4xx with `error` and no token in the body. */
function expectRefused(answer: { status: number; body: any }, error: string | RegExp): void {
  expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(400);
  expect(answer.status).toBeLessThan(500);
  if (typeof error === 'string') expect(answer.body.error).toBe(error);
  else expect(answer.body.error).toMatch(error);
  expect(answer.body.access_token).toBeUndefined();
  expect(answer.body.refresh_token).toBeUndefined();
}

/** Asserts the authorization endpoint issued no code: no consent form, and no redirect carrying a code. */
function expectNoCode(page: {
  status: number;
  html: string;
  location: string | null;
  request: string | undefined;
}): void {
  expect(page.request, 'a consent form was offered').toBeUndefined();
  if (page.location) expect(new URL(page.location).searchParams.get('code')).toBeNull();
}

describe('the token endpoint', () => {
  it('refuses a wrong PKCE verifier, and issues nothing', async () => {
    const got = await rawCode(issuer, client, apiToken);
    const wrong = await tokenRequest(issuer, client, {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: pkce().verifier,
      redirect_uri: REDIRECT,
      resource: `${issuer}/mcp`,
    });
    expectRefused(wrong, 'invalid_grant');
    const none = await tokenRequest(issuer, client, {
      grant_type: 'authorization_code',
      code: got.code,
      redirect_uri: REDIRECT,
      resource: `${issuer}/mcp`,
    });
    expectRefused(none, /invalid_request|invalid_grant/);
  });

  it('refuses a reused code, and revokes the tokens issued from its first use', async () => {
    const got = await rawCode(issuer, client, apiToken);
    const first = await exchange(issuer, client, got);
    expect(await mcpStatus(server.mcpUrl, first.access_token)).toBe(200);
    const again = await tokenRequest(issuer, client, {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: REDIRECT,
      resource: `${issuer}/mcp`,
    });
    expectRefused(again, 'invalid_grant');
    expect(await mcpStatus(server.mcpUrl, first.access_token)).toBe(401);
    expectRefused(
      await tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }),
      'invalid_grant',
    );
  });

  it('refuses a reused refresh token, and revokes the whole grant: the newest access and refresh tokens stop working', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const rotated = await tokenRequest(issuer, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      resource: `${issuer}/mcp`,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(await mcpStatus(server.mcpUrl, rotated.body.access_token)).toBe(200);

    const reused = await tokenRequest(issuer, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      resource: `${issuer}/mcp`,
    });
    expectRefused(reused, 'invalid_grant');
    expect(await mcpStatus(server.mcpUrl, rotated.body.access_token)).toBe(401);
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expectRefused(
      await tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token }),
      'invalid_grant',
    );
  });

  it('a code or a refresh token presented several times at once is honoured exactly once', async () => {
    const got = await rawCode(issuer, client, apiToken);
    const codeAnswers = await Promise.all(
      Array.from({ length: 6 }, () =>
        tokenRequest(issuer, client, {
          grant_type: 'authorization_code',
          code: got.code,
          code_verifier: got.verifier,
          redirect_uri: REDIRECT,
        }),
      ),
    );
    expect(codeAnswers.filter((a) => a.status === 200).length).toBe(1);
    for (const a of codeAnswers.filter((x) => x.status !== 200)) expectRefused(a, 'invalid_grant');
    // The reuse revoked the grant of whichever request won.
    for (const a of codeAnswers.filter((x) => x.status === 200))
      expect(await mcpStatus(server.mcpUrl, a.body.access_token)).toBe(401);

    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const refreshAnswers = await Promise.all(
      Array.from({ length: 6 }, () =>
        tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
      ),
    );
    expect(refreshAnswers.filter((a) => a.status === 200).length).toBe(1);
    for (const a of refreshAnswers.filter((x) => x.status !== 200)) expectRefused(a, 'invalid_grant');
    for (const a of refreshAnswers.filter((x) => x.status === 200))
      expect(await mcpStatus(server.mcpUrl, a.body.access_token)).toBe(401);
  });

  it('refuses a code presented by another client or with another redirect URI', async () => {
    const other = await registerClient(issuer, [REDIRECT], 'Another Host');
    const got = await rawCode(issuer, client, apiToken);
    expectRefused(
      await tokenRequest(issuer, other, {
        grant_type: 'authorization_code',
        code: got.code,
        code_verifier: got.verifier,
        redirect_uri: REDIRECT,
      }),
      /invalid_grant|invalid_client/,
    );
    const got2 = await rawCode(issuer, client, apiToken);
    expectRefused(
      await tokenRequest(issuer, client, {
        grant_type: 'authorization_code',
        code: got2.code,
        code_verifier: got2.verifier,
        redirect_uri: OTHER_REDIRECT,
      }),
      /invalid_grant|invalid_request/,
    );
  });

  it('refuses to exchange a code for a token of another resource', async () => {
    const got = await rawCode(issuer, client, apiToken);
    const answer = await tokenRequest(issuer, client, {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: REDIRECT,
      resource: 'https://other.example.test/mcp',
    });
    expectRefused(answer, /invalid_target|invalid_grant/);
  });

  it('revokes an access token and a refresh token (RFC 7009)', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const form = (token: string) =>
      new URLSearchParams({
        client_id: client.client_id,
        ...(client.client_secret && { client_secret: client.client_secret }),
        token,
      }).toString();
    const revoke = (token: string) =>
      fetch(`${issuer}/revoke`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form(token),
      });
    expect((await revoke(tokens.access_token)).status).toBe(200);
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expect((await revoke(tokens.refresh_token!)).status).toBe(200);
    expectRefused(
      await tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
      'invalid_grant',
    );
    // Unknown tokens are not an error (RFC 7009, section 2.2).
    expect((await revoke('svc_at_unknown')).status).toBe(200);
  });
});

describe('the authorization endpoint', () => {
  it("refuses a resource other than this server's /mcp: no consent page, no code", async () => {
    for (const resource of ['https://other.example.test/mcp', `${issuer}/other`]) {
      const page = await openConsent(authorizeUrl(issuer, params({ resource }).query));
      expectNoCode(page);
      expect(page.location, resource).toBeTruthy();
      const back = new URL(page.location!);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe('invalid_target');
    }
  });

  it('never redirects to an unregistered redirect URI', async () => {
    for (const redirect of ['https://evil.example.test/oauth/callback', `${REDIRECT}/more`, `${REDIRECT}?x=1`]) {
      const page = await openConsent(authorizeUrl(issuer, params({ redirect_uri: redirect }).query));
      expect(page.status, redirect).toBe(400);
      expect(page.location).toBeNull();
      expectNoCode(page);
    }
    const unknownClient = await openConsent(authorizeUrl(issuer, params({ client_id: 'no-such-client' }).query));
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.location).toBeNull();
  });

  it('requires state: without it no code is ever issued', async () => {
    const page = await openConsent(authorizeUrl(issuer, params({ state: undefined }).query));
    expectNoCode(page);
    if (page.location) expect(new URL(page.location).searchParams.get('error')).toBe('invalid_request');
    else expect(page.status).toBe(400);
  });

  it('requires PKCE with S256', async () => {
    for (const overrides of [
      { code_challenge_method: 'plain' },
      { code_challenge: undefined, code_challenge_method: undefined },
    ]) {
      const page = await openConsent(authorizeUrl(issuer, params(overrides).query));
      expectNoCode(page);
      expect(new URL(page.location!).searchParams.get('error')).toBe('invalid_request');
    }
  });
});

describe('the consent page', () => {
  it('deny sends the browser back with error=access_denied and the state; the request cannot be approved afterwards', async () => {
    const page = await openConsent(authorizeUrl(issuer, params({ state: 'deny-me' }).query));
    expect(page.status).toBe(200);
    const denied = await submitConsent(issuer, page, { credential: apiToken, decision: 'deny' });
    expect(denied.status).toBe(302);
    const back = new URL(denied.location!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('deny-me');
    expect(back.searchParams.get('code')).toBeNull();
    const later = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve' });
    expect(later.status).toBe(400);
    expect(later.location).toBeNull();
  });

  it('a bad credential gets the page again with 401 and no code; the page it gets then still works', async () => {
    let page = await openConsent(authorizeUrl(issuer, params().query));
    for (const credential of ['svc_not-a-real-token-at-all', 'some-login-code']) {
      const answer = await submitConsent(issuer, page, { credential, decision: 'approve' });
      expect(answer.status, credential).toBe(401);
      expect(answer.location).toBeNull();
      expect(answer.html).toContain('Refusal Test Host');
      expect(answer.html).toMatch(/not accepted/i);
      expect(hasInput(answer.html, 'credential')).toBe(true);
      // The page that comes back carries its own CSRF token; the old one is spent.
      const again = {
        ...page,
        html: answer.html,
        request: inputValue(answer.html, 'request'),
        csrf: inputValue(answer.html, 'csrf'),
      };
      expect(again.request).toBe(page.request);
      expect((await submitConsent(issuer, page, { credential: apiToken, decision: 'approve' })).status).toBe(400);
      page = again;
    }
    const approved = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve' });
    expect(approved.status).toBe(302);
    expect(new URL(approved.location!).searchParams.get('code')).toBeTruthy();
  });

  it('a missing or wrong CSRF token, or an unknown request, gets a 400 page and no code', async () => {
    const page = await openConsent(authorizeUrl(issuer, params().query));
    for (const fields of [
      { csrf: undefined },
      { csrf: 'forged' },
      { request: 'no-such-request' },
      { request: undefined },
    ]) {
      const answer = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve', ...fields });
      expect(answer.status, JSON.stringify(fields)).toBe(400);
      expect(answer.location).toBeNull();
    }
    // Another page's CSRF token does not fit this request.
    const other = await openConsent(authorizeUrl(issuer, params().query));
    const crossed = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve', csrf: other.csrf });
    expect(crossed.status).toBe(400);
    expect(crossed.location).toBeNull();
  });

  it('a request is approved once: a second approval of the same form is refused', async () => {
    const { query } = params();
    const page = await openConsent(authorizeUrl(issuer, query));
    const first = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve' });
    expect(first.status).toBe(302);
    expect(new URL(first.location!).searchParams.get('code')).toBeTruthy();
    const second = await submitConsent(issuer, page, { credential: apiToken, decision: 'approve' });
    expect(second.status).toBe(400);
    expect(second.location).toBeNull();
  });
});

describe('/mcp with OAuth tokens beside API tokens', () => {
  it('a static API token still works, and an OAuth caller has the same tenancy', async () => {
    expect(await mcpStatus(server.mcpUrl, apiToken)).toBe(200);
    const bobToken = server.token('bob');
    const bobs = await post(
      server.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_create_project', arguments: { name: 'Bob private' } },
      },
      bobToken,
    );
    const bobProject = bobs.json.result.structuredContent;
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const denied = await post(
      server.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'svc_get_project', arguments: { projectId: bobProject.id } },
      },
      tokens.access_token,
    );
    expect(denied.json.error.code).toBe(-32003);
    expect(await mcpStatus(server.mcpUrl, apiToken)).toBe(200);
  });

  it('an access token is refused by a server whose /mcp is another resource (same store, other issuer)', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const otherApp = await startTestServer({ dataDir: server.dataDir });
    try {
      expect(otherApp.http.url).not.toBe(issuer);
      expect(await mcpStatus(otherApp.mcpUrl, tokens.access_token)).toBe(401);
      // The API token is not bound to an audience: it works on both.
      expect(await mcpStatus(otherApp.mcpUrl, apiToken)).toBe(200);
      expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(200);
    } finally {
      await otherApp.http.close();
      await otherApp.app.close();
    }
  });
});

describe('what the consent page shows', () => {
  it("escapes the client's name, and names the host the browser really goes to", async () => {
    const sneaky = await registerClient(
      issuer,
      ['https://trusted.example.test@evil.example.test/cb'],
      '<img src=x onerror=alert(1)>Evil & Co',
    );
    const { challenge } = pkce();
    const page = await openConsent(
      authorizeUrl(issuer, {
        response_type: 'code',
        client_id: sneaky.client_id,
        redirect_uri: sneaky.redirect_uris[0],
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 's',
      }),
    );
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('<img src=x');
    expect(page.html).toContain('&lt;img src=x onerror=alert(1)&gt;Evil &amp; Co');
    expect(page.html).toContain('evil.example.test');
    // Not framed by another site (clickjacking), no script at all.
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toContain('no-store');
  });

  it('refuses an OAuth token typed as the credential', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const page = await openConsent(authorizeUrl(issuer, params().query));
    for (const credential of [tokens.access_token, tokens.refresh_token!]) {
      const answer = await submitConsent(issuer, page, { credential, decision: 'approve' });
      expect(answer.status).toBe(401);
      expect(answer.location).toBeNull();
      page.csrf = inputValue(answer.html, 'csrf');
    }
  });
});

describe('typed credentials per address', () => {
  it('counts each typed credential against the bound on unauthenticated requests: past it, a 429 page and no code', async () => {
    const bounded = await startTestServer({ unauthenticatedPerMinute: 2 });
    try {
      const boundedIssuer = bounded.http.url;
      const boundedClient = await registerClient(boundedIssuer, [REDIRECT]);
      const good = bounded.token('carol');
      const { challenge } = pkce();
      const page = await openConsent(
        authorizeUrl(boundedIssuer, {
          response_type: 'code',
          client_id: boundedClient.client_id,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state: 's',
          resource: `${boundedIssuer}/mcp`,
        }),
      );
      for (let i = 0; i < 2; i++) {
        const wrong = await submitConsent(boundedIssuer, page, { credential: `svc_wrong${i}`, decision: 'approve' });
        expect(wrong.status).toBe(401);
        page.csrf = inputValue(wrong.html, 'csrf');
      }
      const limited = await submitConsent(boundedIssuer, page, { credential: good, decision: 'approve' });
      expect(limited.status).toBe(429);
      expect(limited.location).toBeNull();
      expect(limited.html).toContain('Too many sign-in attempts');
    } finally {
      await bounded.close();
    }
  });
});

describe('tokens in the wrong place', () => {
  it('a refresh token is not a Bearer token, an access token is not a refresh token, and another client cannot refresh', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    expect(await mcpStatus(server.mcpUrl, tokens.refresh_token!)).toBe(401);
    expectRefused(
      await tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: tokens.access_token }),
      'invalid_grant',
    );
    const other = await registerClient(issuer, [REDIRECT], 'Thief Host');
    expectRefused(
      await tokenRequest(issuer, other, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
      /invalid_grant|invalid_client/,
    );
    expectRefused(
      await tokenRequest(issuer, client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        resource: 'https://other.example.test/mcp',
      }),
      /invalid_target|invalid_grant/,
    );
    expectRefused(await tokenRequest(issuer, client, { grant_type: 'client_credentials' }), 'unsupported_grant_type');
  });

  it("without a resource parameter the token is still bound to this server's /mcp", async () => {
    const got = await rawCode(issuer, client, apiToken, { resource: undefined });
    const answer = await tokenRequest(issuer, client, {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: REDIRECT,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await mcpStatus(server.mcpUrl, answer.body.access_token)).toBe(200);
  });

  it('codes, tokens and login codes are stored as hashes only', async () => {
    const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
    const loginCode = await server.app.loginCodes.create('alice');
    const rotated = await tokenRequest(issuer, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    const got = await rawCode(issuer, client, apiToken);
    const secrets = [
      tokens.access_token,
      tokens.refresh_token!,
      rotated.body.access_token,
      rotated.body.refresh_token,
      got.code,
      loginCode,
      loginCode.replace(/-/g, ''),
      apiToken,
    ];
    const files = ['mobile-builder.db', 'mobile-builder.db-wal'].map((f) => join(server.dataDir, f)).filter(existsSync);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = readFileSync(file).toString('latin1');
      for (const secret of secrets) expect(bytes.includes(secret), `${secret.slice(0, 9)}… in ${file}`).toBe(false);
    }
  });
});

describe('a confidential client (client_secret_post)', () => {
  it('gets its secret once; the store keeps only its hash; a wrong or missing secret is refused at /token and /revoke', async () => {
    const res = await fetch(`${issuer}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Confidential Host',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    expect(res.status).toBe(201);
    const confidential = (await res.json()) as RegisteredClient;
    expect(confidential.client_secret).toMatch(/^[0-9a-f]{64}$/);
    const secret = confidential.client_secret!;

    const got = await rawCode(issuer, confidential, apiToken);
    const withoutSecret = { ...confidential, client_secret: undefined };
    const wrongSecret = { ...confidential, client_secret: 'f'.repeat(64) };
    const code = {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: REDIRECT,
    };
    expectRefused(await tokenRequest(issuer, withoutSecret, code), 'invalid_client');
    expectRefused(await tokenRequest(issuer, wrongSecret, code), 'invalid_client');
    const tokens = await tokenRequest(issuer, confidential, code);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(await mcpStatus(server.mcpUrl, tokens.body.access_token)).toBe(200);
    const rotated = await tokenRequest(issuer, confidential, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);

    const revoke = (who: RegisteredClient) =>
      fetch(`${issuer}/revoke`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: who.client_id,
          ...(who.client_secret && { client_secret: who.client_secret }),
          token: rotated.body.access_token,
        }).toString(),
      });
    expect((await revoke(wrongSecret)).status).toBe(400);
    expect(await mcpStatus(server.mcpUrl, rotated.body.access_token)).toBe(200);
    expect((await revoke(confidential)).status).toBe(200);
    expect(await mcpStatus(server.mcpUrl, rotated.body.access_token)).toBe(401);

    const files = ['mobile-builder.db', 'mobile-builder.db-wal'].map((f) => join(server.dataDir, f)).filter(existsSync);
    for (const file of files)
      expect(readFileSync(file).toString('latin1').includes(secret), `the client secret in ${file}`).toBe(false);
  });
});

describe('rate limits per user, not per grant', () => {
  it("two signed-in hosts of one user share the user's request limit", async () => {
    const limited = await startTestServer({
      plans: { free: { requestsPerMinute: 4, projectCreationsPerHour: 10, maxProjects: 100 } },
    });
    try {
      const limitedIssuer = limited.http.url;
      const host = await registerClient(limitedIssuer, [REDIRECT]);
      const token = limited.token('dave');
      const a = await exchange(limitedIssuer, host, await rawCode(limitedIssuer, host, token));
      const b = await exchange(limitedIssuer, host, await rawCode(limitedIssuer, host, token));
      const statuses: number[] = [];
      for (const t of [
        a.access_token,
        b.access_token,
        a.access_token,
        b.access_token,
        a.access_token,
        b.access_token,
      ]) {
        const res = await post(
          limited.mcpUrl,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } },
          t,
        );
        statuses.push(res.json?.error?.code ?? res.status);
      }
      expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
      expect(statuses.slice(4)).toEqual([-32005, -32005]);
    } finally {
      await limited.close();
    }
  });
});

describe('Client ID Metadata Documents that are refused', () => {
  it('refuses a document that names another client_id, redirects, is not JSON, lacks the redirect URI or lists a plain-http one; and http off loopback', async () => {
    const docs = await loopbackServer((req, res) => {
      const self = `http://${req.headers.host}${req.url}`;
      const body: Record<string, unknown> = { client_id: self, client_name: 'Doc Host', redirect_uris: [REDIRECT] };
      if (req.url === '/other-id.json') body.client_id = 'https://elsewhere.example.test/client.json';
      if (req.url === '/redirect.json') return void res.writeHead(302, { Location: '/good.json' }).end();
      if (req.url === '/not-json.json')
        return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>');
      if (req.url === '/other-redirect.json') body.redirect_uris = ['https://elsewhere.example.test/cb'];
      // The same rules as for a registered client: no code over plain http off loopback.
      if (req.url === '/plain-http-redirect.json') body.redirect_uris = ['http://plain.example.test/cb'];
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      const ask = (clientId: string) => openConsent(authorizeUrl(issuer, { ...params().query, client_id: clientId }));
      const good = await ask(`${docs.url}/good.json`);
      expect(good.status, good.html.slice(0, 300)).toBe(200);
      expect(good.html).toContain('Doc Host');
      for (const path of ['/other-id.json', '/redirect.json', '/not-json.json', '/other-redirect.json']) {
        const page = await ask(`${docs.url}${path}`);
        expect(page.status, path).toBe(400);
        expect(page.location, path).toBeNull();
        expectNoCode(page);
      }
      const plain = await openConsent(
        authorizeUrl(issuer, {
          ...params().query,
          client_id: `${docs.url}/plain-http-redirect.json`,
          redirect_uri: 'http://plain.example.test/cb',
        }),
      );
      expect(plain.status, 'a document whose redirect URI is http off loopback').toBe(400);
      expect(plain.location).toBeNull();
      expectNoCode(plain);
      const before = docs.requests.length;
      const offLoopback = await ask('http://docs.example.test/client.json');
      expect(offLoopback.status).toBe(400);
      expectNoCode(offLoopback);
      expect(docs.requests.length).toBe(before);
    } finally {
      await docs.close();
    }
  });
});

describe('a store shared by two servers of the same public URL', () => {
  it('a grant revoked by reuse in one is refused by the other too', async () => {
    const twin = await startTestServer({ dataDir: server.dataDir, publicUrl: issuer });
    try {
      const tokens = await exchange(issuer, client, await rawCode(issuer, client, apiToken));
      const rotated = await tokenRequest(issuer, client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
      });
      expect(await mcpStatus(twin.mcpUrl, rotated.body.access_token)).toBe(200);
      expectRefused(
        await tokenRequest(issuer, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
        'invalid_grant',
      );
      // The twin notices the other connection's commit (its token cache is cleared), then refuses for good.
      await waitFor(
        async () => (await mcpStatus(twin.mcpUrl, rotated.body.access_token)) === 401,
        20_000,
        'the twin to refuse the revoked token',
      );
      expect(await mcpStatus(twin.mcpUrl, rotated.body.access_token)).toBe(401);
    } finally {
      await twin.http.close();
      await twin.app.close();
    }
  });
});

describe('registration never widens a client', () => {
  it('a registration naming an existing client_id gets a new client; the old one keeps its redirect URIs', async () => {
    const res = await fetch(`${issuer}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_id: client.client_id,
        client_name: 'Hijacker',
        redirect_uris: ['https://evil.example.test/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as RegisteredClient).client_id).not.toBe(client.client_id);
    const page = await openConsent(
      authorizeUrl(issuer, params({ redirect_uri: 'https://evil.example.test/cb' }).query),
    );
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
    const mine = await openConsent(authorizeUrl(issuer, params().query));
    expect(mine.html).toContain('Refusal Test Host');
    expect(mine.html).not.toContain('Hijacker');
  });

  it('refuses redirect URIs a browser must never be sent to', async () => {
    for (const uri of ['javascript:alert(1)', 'http://evil.example.test/cb', 'data:text/html,hi']) {
      const res = await fetch(`${issuer}/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
      });
      expect(res.status, uri).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    }
  });

  it('refuses a registration listing more than 20 redirect URIs', async () => {
    const register = (count: number) =>
      fetch(`${issuer}/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: Array.from({ length: count }, (_, i) => `https://host.example.test/cb/${i}`),
          token_endpoint_auth_method: 'none',
        }),
      });
    expect((await register(20)).status).toBe(201);
    const refused = await register(21);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_client_metadata');
  });

  it("answers a method the OAuth routes do not take with its own page, not the framework's", async () => {
    const res = await fetch(`${issuer}/authorize/consent`);
    expect(res.status).toBe(405);
    const html = await res.text();
    expect(html).toContain('start the sign-in again');
    expect(html).not.toContain('Cannot GET');
  });
});

describe('lifetimes (shortened through AppConfig.oauth)', () => {
  // Each server's clock runs `offsetMs` ahead: passing an expiry moves it, nothing waits.
  let offsetMs = 0;
  const clock = () => new Date(Date.now() + offsetMs);
  const pastExpiry = (seconds: number) => (offsetMs += seconds * 1000 + 1000);

  it('refuses an expired code', async () => {
    const short = await startTestServer({ oauth: { codeTtlSeconds: 1 }, clock });
    try {
      const shortIssuer = short.http.url;
      const shortClient = await registerClient(shortIssuer, [REDIRECT]);
      const got = await rawCode(shortIssuer, shortClient, short.token('carol'));
      pastExpiry(1);
      const answer = await tokenRequest(shortIssuer, shortClient, {
        grant_type: 'authorization_code',
        code: got.code,
        code_verifier: got.verifier,
        redirect_uri: REDIRECT,
        resource: `${shortIssuer}/mcp`,
      });
      expectRefused(answer, 'invalid_grant');
    } finally {
      await short.close();
    }
  });

  it('refuses an expired access token; the refresh token still gets a new one', async () => {
    const short = await startTestServer({ oauth: { accessTokenTtlSeconds: 1 }, clock });
    try {
      const shortIssuer = short.http.url;
      const shortClient = await registerClient(shortIssuer, [REDIRECT]);
      const tokens = await exchange(
        shortIssuer,
        shortClient,
        await rawCode(shortIssuer, shortClient, short.token('carol')),
      );
      expect(tokens.expires_in).toBe(1);
      pastExpiry(1);
      expect(await mcpStatus(short.mcpUrl, tokens.access_token)).toBe(401);
      const refreshed = await tokenRequest(shortIssuer, shortClient, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        resource: `${shortIssuer}/mcp`,
      });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      expect(refreshed.body.access_token).toMatch(/^svc_at_/);
    } finally {
      await short.close();
    }
  });

  it('refuses an expired refresh token', async () => {
    const short = await startTestServer({ oauth: { refreshTokenTtlSeconds: 1 }, clock });
    try {
      const shortIssuer = short.http.url;
      const shortClient = await registerClient(shortIssuer, [REDIRECT]);
      const tokens = await exchange(
        shortIssuer,
        shortClient,
        await rawCode(shortIssuer, shortClient, short.token('carol')),
      );
      pastExpiry(1);
      expectRefused(
        await tokenRequest(shortIssuer, shortClient, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
        }),
        'invalid_grant',
      );
    } finally {
      await short.close();
    }
  });
});

describe('default lifetimes, on a clock the test moves (no waiting)', () => {
  let offsetMs = 0;
  let moved: TestServer;
  let movedIssuer: string;
  let movedClient: RegisteredClient;
  let token: string;
  const later = (seconds: number) => (offsetMs += seconds * 1000);

  beforeAll(async () => {
    moved = await startTestServer({ clock: () => new Date(Date.now() + offsetMs) });
    movedIssuer = moved.http.url;
    movedClient = await registerClient(movedIssuer, [REDIRECT]);
    token = moved.token('frank');
  });
  afterAll(async () => {
    await moved.close();
  });

  it('a code lives 60 s', async () => {
    const early = await rawCode(movedIssuer, movedClient, token);
    const late = await rawCode(movedIssuer, movedClient, token);
    later(50);
    await exchange(movedIssuer, movedClient, early);
    later(11);
    expectRefused(
      await tokenRequest(movedIssuer, movedClient, {
        grant_type: 'authorization_code',
        code: late.code,
        code_verifier: late.verifier,
        redirect_uri: REDIRECT,
      }),
      'invalid_grant',
    );
  });

  it('an access token lives 1 h, a refresh token 30 days', async () => {
    const tokens = await exchange(movedIssuer, movedClient, await rawCode(movedIssuer, movedClient, token));
    expect(tokens.expires_in).toBe(3600);
    const spare = await exchange(movedIssuer, movedClient, await rawCode(movedIssuer, movedClient, token));
    later(3590);
    expect(await mcpStatus(moved.mcpUrl, tokens.access_token)).toBe(200);
    later(11);
    expect(await mcpStatus(moved.mcpUrl, tokens.access_token)).toBe(401);
    const refreshed = await tokenRequest(movedIssuer, movedClient, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    expect(refreshed.status).toBe(200);
    later(30 * 86_400 - 3601 - 10);
    expect(
      (
        await tokenRequest(movedIssuer, movedClient, {
          grant_type: 'refresh_token',
          refresh_token: spare.refresh_token!,
        })
      ).status,
    ).toBe(200);
    const another = await exchange(movedIssuer, movedClient, await rawCode(movedIssuer, movedClient, token));
    later(30 * 86_400 + 1);
    expectRefused(
      await tokenRequest(movedIssuer, movedClient, {
        grant_type: 'refresh_token',
        refresh_token: another.refresh_token!,
      }),
      'invalid_grant',
    );
  });

  it('a consent page waits 10 min for its decision; a login code lives 10 min', async () => {
    const page = await openConsent(
      authorizeUrl(movedIssuer, {
        response_type: 'code',
        client_id: movedClient.client_id,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 's',
      }),
    );
    const loginCode = await moved.app.loginCodes.create('frank');
    later(601);
    const answer = await submitConsent(movedIssuer, page, { credential: token, decision: 'approve' });
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    const fresh = await openConsent(
      authorizeUrl(movedIssuer, {
        response_type: 'code',
        client_id: movedClient.client_id,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 's',
      }),
    );
    const refused = await submitConsent(movedIssuer, fresh, { credential: loginCode, decision: 'approve' });
    expect(refused.status).toBe(401);
    expect(refused.location).toBeNull();
  });

  it('token list shows an approval whose code is not exchanged yet as pending; abandoned, it is deleted a day later', async () => {
    const frank = async () => (await moved.app.oauthGrants.list()).filter((g) => g.user === 'frank');
    const before = new Set((await frank()).map((g) => g.id));
    await rawCode(movedIssuer, movedClient, token);
    const abandoned = (await frank()).find((g) => !before.has(g.id))!;
    expect(abandoned.state).toBe('pending');
    const used = await exchange(movedIssuer, movedClient, await rawCode(movedIssuer, movedClient, token));
    later(61);
    expect((await frank()).find((g) => g.id === abandoned.id)?.state).toBe('expired');
    later(86_400);
    // Housekeeping runs at the next approval.
    await rawCode(movedIssuer, movedClient, token);
    expect((await frank()).find((g) => g.id === abandoned.id)).toBeUndefined();
    // A grant with a live refresh token stays.
    const kept = (await frank()).filter((g) => g.state === 'active');
    expect(kept.length).toBeGreaterThan(0);
    expect(
      (
        await tokenRequest(movedIssuer, movedClient, {
          grant_type: 'refresh_token',
          refresh_token: used.refresh_token!,
        })
      ).status,
    ).toBe(200);
  });
});
