/**
 * Forms posted by a page on another port of the same host (docs/console.md "Web console", "Sign in with
 * OAuth"): the browser sends the SameSite=Strict session cookie with them (cookies do not tell
 * ports apart), so only the exact origin of this server may post. Without that, a page on
 * another port approved an OAuth client it had registered itself, with the person's console
 * session, and signed the browser in as someone else with a planted sign-in cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, toolResult, type TestServer } from '../helpers.js';
import { authorizeUrl, openConsent, pkce, registerClient } from '../oauth/oauth-helpers.js';
import { rawSignIn } from './console-helpers.js';

let server: TestServer;
let base: string;
/** The origin of a page on another port of the same host. */
let sameSite: string;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  base = server.http.url;
  const port = Number(new URL(base).port);
  sameSite = `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}`;
});

afterAll(async () => {
  await server?.close();
});

/** A consent form someone else opened: its request id and CSRF token are known to them. */
async function foreignConsentRequest() {
  const redirect = 'http://127.0.0.1:9/callback';
  const client = await registerClient(base, [redirect], 'Same-site page');
  const { challenge } = pkce();
  const page = await openConsent(
    authorizeUrl(base, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    }),
  );
  expect(page.status).toBe(200);
  return { request: page.request!, csrf: page.csrf! };
}

function consentPost(cookie: string, origin: string, fields: Record<string, string>) {
  return fetch(`${base}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, Origin: origin },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('forms from another origin of the same host', () => {
  it('a consent decision posted with the console session from another port is refused and issues no code', async () => {
    const alice = await rawSignIn(base, server.token('alice'));
    const foreign = await foreignConsentRequest();
    // Even with the session's own CSRF token (which such a page cannot read), the origin refuses it.
    const refused = await consentPost(alice.cookie, sameSite, {
      ...foreign,
      session_csrf: alice.csrf,
      decision: 'approve',
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('location')).toBeNull();
    expect(((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason).toBe(
      'origin_not_allowed',
    );
    // The same decision from the server's own page (the person clicking Approve) still works.
    const approved = await consentPost(alice.cookie, base, {
      ...foreign,
      session_csrf: alice.csrf,
      decision: 'approve',
    });
    expect(approved.status).toBe(302);
    expect(new URL(approved.headers.get('location')!).searchParams.get('code')).toBeTruthy();
  });

  it('a sign-in with a planted sign-in cookie from another port opens no session', async () => {
    const res = await fetch(`${base}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: 'svc_signin=planted', Origin: sameSite },
      body: new URLSearchParams({ csrf: 'planted', credential: server.token('mallory') }).toString(),
    });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(false);
  });

  it('a console form from another port is refused even with the session CSRF token; from the console itself it works', async () => {
    const token = server.token('bob');
    const bob = await rawSignIn(base, token);
    const post = (origin: string, name: string) =>
      fetch(`${base}/projects`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: bob.cookie, Origin: origin },
        body: new URLSearchParams({ csrf: bob.csrf, name }).toString(),
      });
    expect((await post(sameSite, 'From elsewhere')).status).toBe(403);
    expect((await post('null', 'From a sandbox')).status).toBe(403);
    expect((await post(base, 'From the console')).status).toBe(303);
    const { projects } = await toolResult(server.mcpUrl, token, 'svc_list_projects', {});
    expect(projects.map((p: { name: string }) => p.name)).toEqual(['From the console']);
  });

  it("a session cookie planted beside the person's own (another Path, set from another port) signs nobody in, and the sign-in page says why", async () => {
    const victim = await rawSignIn(base, server.token('victor'));
    const attacker = await rawSignIn(base, server.token('mallet'));
    // The browser sends the more specific path first: the planted cookie, then the person's own.
    const both = `${attacker.cookie}; ${victim.cookie}`;
    const projects = await fetch(`${base}/projects`, { redirect: 'manual', headers: { Cookie: both } });
    expect(projects.status).toBe(303);
    expect(projects.headers.get('location')).toBe('/signin');
    const signin = await fetch(`${base}/signin`, { redirect: 'manual', headers: { Cookie: both } });
    expect(signin.status).toBe(400);
    expect(await signin.text()).toContain('a page on another port of this host has set one');
    // Each cookie alone still works: nothing was signed out.
    expect((await fetch(`${base}/projects`, { redirect: 'manual', headers: { Cookie: victim.cookie } })).status).toBe(
      200,
    );
  });
});
