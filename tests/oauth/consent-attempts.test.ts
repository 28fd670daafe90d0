/**
 * Credentials typed on the consent page count against the per-address bound on sign-in attempts
 * (docs/security.md "Sign in with OAuth"), like the console's sign-in: past it the page answers 429 with
 * Retry-After and checks no credential, not even a good one, until the window passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers.js';
import { authorizeUrl, openConsent, pkce, registerClient, submitConsent } from './oauth-helpers.js';

const REDIRECT = 'https://host.example.test/oauth/callback';
let server: TestServer;
let issuer: string;

beforeAll(async () => {
  server = await startTestServer({ unauthenticatedPerMinute: 3 });
  issuer = server.http.url;
});
afterAll(async () => {
  await server.close();
});

describe('guessing credentials on the consent page', () => {
  it('is bounded per client address: the fourth attempt in a minute is 429 and issues no code', async () => {
    const client = await registerClient(issuer, [REDIRECT], 'Guessing host');
    const page = await openConsent(
      authorizeUrl(issuer, {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 's',
      }),
    );
    let csrf = page.csrf;
    for (let i = 0; i < 3; i++) {
      const wrong = await submitConsent(
        issuer,
        { ...page, csrf },
        { credential: `AAAAA-BBBBB-CCCCC-DDDDD-EEEE${i}`, decision: 'approve' },
      );
      expect(wrong.status).toBe(401);
      csrf = /name="csrf" value="([^"]+)"/.exec(wrong.html)![1]!;
    }
    const res = await fetch(`${issuer}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        request: page.request!,
        csrf: csrf!,
        credential: server.token('alice'),
        decision: 'approve',
      }).toString(),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('Too many sign-in attempts');
  });
});
