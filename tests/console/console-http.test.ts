/**
 * The web console over raw HTTP: security headers (strict CSP, no inline script, HttpOnly
 * SameSite=Strict cookie), CSRF and Host/Origin refusals, the request limit shared with the tools,
 * the bound on live event streams, and a session that ends with its API token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { silentLogger } from '../../src/logger.js';
import {
  callTool,
  GENEROUS_PLANS,
  rawHttp,
  startTestServer,
  toolResult,
  waitFor,
  waitIdle,
  type TestServer,
} from '../helpers.js';
import { rawSignIn } from './console-helpers.js';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  base = server.http.url;
});

afterAll(async () => {
  await server?.close();
});

/** A form as the console's page at `origin` posts it (a browser sends the page's own origin). */
const form = (session: { cookie: string }, fields: Record<string, string>, origin = base) => ({
  method: 'POST',
  redirect: 'manual' as const,
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie, Origin: origin },
  body: new URLSearchParams(fields).toString(),
});

describe('web console over HTTP', () => {
  it('sends a strict CSP, no inline script, and a session cookie the page cannot read', async () => {
    const signin = await fetch(`${base}/signin`);
    const csp = signin.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const body = await signin.text();
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(body).not.toMatch(/\son[a-z]+=/i);
    expect(signin.headers.get('x-frame-options')).toBe('DENY');

    const js = await fetch(`${base}/console/console.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');

    const token = server.token('carol');
    const g = await fetch(`${base}/signin`, { redirect: 'manual' });
    const signinCookie = g.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await g.text())![1]!;
    const res = await fetch(`${base}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: signinCookie },
      body: new URLSearchParams({ csrf, credential: token }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/projects');
    const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).toMatch(/Path=\//);
    expect(set).not.toContain(token);
  });

  it('refuses a form without its CSRF token, a sign-in without the form cookie, and a foreign Host or Origin', async () => {
    const session = await rawSignIn(base, server.token('dave'));
    const forged = await fetch(`${base}/projects`, form(session, { name: 'Forged' }));
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('Invalid request');
    const list = await (await fetch(`${base}/projects`, { headers: { Cookie: session.cookie } })).text();
    expect(list).not.toContain('Forged');

    const noCookie = await fetch(`${base}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'x', credential: server.token('dave') }).toString(),
    });
    expect(noCookie.status).toBe(400);
    expect(noCookie.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(false);

    const rebinding = await rawHttp(`${base}/projects`, { headers: { Host: 'evil.example', Cookie: session.cookie } });
    expect(rebinding.status).toBe(403);
    const crossSite = await rawHttp(`${base}/projects`, {
      method: 'POST',
      headers: {
        Origin: 'https://evil.example',
        Cookie: session.cookie,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: session.csrf, name: 'Cross' }).toString(),
    });
    expect(crossSite.status).toBe(403);

    const ok = await fetch(`${base}/projects`, form(session, { csrf: session.csrf, name: 'Mine' }));
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toMatch(/^\/projects\/[0-9a-f-]{36}$/);
  });

  it('signs in with a one-time login code, once', async () => {
    server.token('ivy');
    const code = await server.app.loginCodes.create('ivy');
    const session = await rawSignIn(base, code);
    const page = await fetch(`${base}/projects`, { headers: { Cookie: session.cookie } });
    expect(await page.text()).toContain('>ivy<');

    const again = await fetch(`${base}/signin`, { redirect: 'manual' });
    const signinCookie = again.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await again.text())![1]!;
    const reused = await fetch(`${base}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: signinCookie },
      body: new URLSearchParams({ csrf, credential: code }).toString(),
    });
    expect(reused.status).toBe(401);
    expect(await reused.text()).toContain('Authentication failed - invalid or expired API key');
  });

  it('ends the session when its API token is revoked', async () => {
    const { token, summary } = await server.app.tokens.create('erin');
    const session = await rawSignIn(base, token);
    expect((await fetch(`${base}/projects`, { headers: { Cookie: session.cookie }, redirect: 'manual' })).status).toBe(
      200,
    );
    await server.app.tokens.revoke(summary.id);
    const after = await fetch(`${base}/projects`, { headers: { Cookie: session.cookie }, redirect: 'manual' });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/signin');
  });

  it('bounds the live event streams of one user', async () => {
    const session = await rawSignIn(base, server.token('frank'));
    const created = await fetch(`${base}/projects`, form(session, { csrf: session.csrf, name: 'Streams' }));
    const path = created.headers.get('location')!;
    const controllers: AbortController[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        const res = await fetch(`${base}${path}/events`, {
          headers: { Cookie: session.cookie, Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/event-stream');
      }
      const refused = await fetch(`${base}${path}/events`, { headers: { Cookie: session.cookie } });
      expect(refused.status).toBe(429);
      // Another user is not affected.
      const other = await rawSignIn(base, server.token('grace'));
      const otherProject = await fetch(`${base}/projects`, form(other, { csrf: other.csrf, name: 'Other' }));
      const controller = new AbortController();
      controllers.push(controller);
      const theirs = await fetch(`${base}${otherProject.headers.get('location')!}/events`, {
        headers: { Cookie: other.cookie },
        signal: controller.signal,
      });
      expect(theirs.status).toBe(200);
    } finally {
      for (const c of controllers) c.abort();
    }
    // Closed streams are given back.
    await waitFor(
      async () =>
        await fetch(`${base}${path}/events`, {
          headers: { Cookie: session.cookie },
          signal: AbortSignal.timeout(5000),
        }).then((r) => {
          void r.body?.cancel();
          return r.status === 200;
        }),
      15_000,
      'a stream slot to be given back',
    );
  });
});

describe('web console limits', () => {
  let limited: TestServer;

  beforeAll(async () => {
    limited = await startTestServer({
      builder: 'scripted',
      plans: { free: { requestsPerMinute: 4, projectCreationsPerHour: 1, maxProjects: 100 } },
    });
  });

  afterAll(async () => {
    await limited?.close();
  });

  it('counts console pages against the request limit like tool calls, and applies the creation limit', async () => {
    const url = limited.http.url;
    const token = limited.token('henry');
    const session = await rawSignIn(url, token);
    // rawSignIn read /projects once: one request of four in this minute.
    const first = await fetch(`${url}/projects`, form(session, { csrf: session.csrf, name: 'One' }, url));
    expect(first.status).toBe(303);
    const second = await fetch(`${url}/projects`, form(session, { csrf: session.csrf, name: 'Two' }, url));
    expect(second.status).toBe(429);
    const text = await second.text();
    expect(text).toContain('-32005');
    expect(text).toContain('Rate limit exceeded - please slow down requests');
    expect(text).toContain('project_creation');
    const fourth = await fetch(`${url}/projects`, { headers: { Cookie: session.cookie } });
    expect(fourth.status).toBe(200);
    expect(fourth.headers.get('x-ratelimit-remaining')).toBe('0');
    const fifth = await fetch(`${url}/projects`, { headers: { Cookie: session.cookie } });
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await fifth.text()).toContain('Rate limit exceeded - please slow down requests');
    // Signed in with an API token, the console and that token's tool calls share one budget.
    const tool = await callTool(`${url}/mcp`, token, 'svc_list_projects', {});
    expect(tool.status).toBe(429);
    expect(tool.json.error.code).toBe(-32005);
  });

  it('signs out past the request limit', async () => {
    const url = limited.http.url;
    const session = await rawSignIn(url, limited.token('ivan'));
    for (;;) {
      const res = await fetch(`${url}/projects`, { headers: { Cookie: session.cookie } });
      if (res.status === 429) break;
      expect(res.status).toBe(200);
    }
    const out = await fetch(`${url}/signout`, form(session, { csrf: session.csrf }, url));
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/signin');
    expect(out.headers.getSetCookie().some((c) => c.startsWith('svc_session=;') && c.includes('Max-Age=0'))).toBe(true);
    const after = await fetch(`${url}/projects`, { redirect: 'manual', headers: { Cookie: session.cookie } });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/signin');
  });
});

describe('console session on the OAuth consent page', () => {
  it('signs the consent page in: no credential field, the console user named', async () => {
    const session = await rawSignIn(base, server.token('judy'));
    const registered = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Console test client',
        redirect_uris: ['http://127.0.0.1:9/callback'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: 'code',
      client_id,
      redirect_uri: 'http://127.0.0.1:9/callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'xyz',
    });
    const signedIn = await (await fetch(`${base}/authorize?${query}`, { headers: { Cookie: session.cookie } })).text();
    expect(signedIn).toContain('judy');
    expect(signedIn).not.toContain('name="credential"');
    const anonymous = await (await fetch(`${base}/authorize?${query}`)).text();
    expect(anonymous).toContain('name="credential"');
  });

  it("approves with the session only when the form carries the session's own CSRF token", async () => {
    const session = await rawSignIn(base, server.token('mallory-victim'));
    const redirectUri = 'http://127.0.0.1:9/callback';
    const registered = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Someone else',
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
      }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: 'code',
      client_id,
      redirect_uri: redirectUri,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'xyz',
    });
    const hidden = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
    const decide = (fields: Record<string, string>) =>
      fetch(`${base}/authorize/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie },
        body: new URLSearchParams({ decision: 'approve', ...fields }).toString(),
      });
    // A page that someone else opened (no cookie) yields a request id and CSRF token anyone can read;
    // posted with the signed-in browser's cookie, it must not approve as that browser's user.
    const foreign = await (await fetch(`${base}/authorize?${query}`)).text();
    const refused = await decide({ request: hidden(foreign, 'request')!, csrf: hidden(foreign, 'csrf')! });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('location')).toBeNull();
    // The page shown to the signed-in browser approves with one click.
    const own = await (await fetch(`${base}/authorize?${query}`, { headers: { Cookie: session.cookie } })).text();
    const sessionCsrf = hidden(own, 'session_csrf');
    expect(sessionCsrf).toBeDefined();
    const approved = await decide({
      request: hidden(own, 'request')!,
      csrf: hidden(own, 'csrf')!,
      session_csrf: sessionCsrf!,
    });
    expect(approved.status).toBe(302);
    const location = new URL(approved.headers.get('location')!);
    expect(location.searchParams.get('code')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('xyz');
  });
});

describe('conversation pages', () => {
  it('shows the latest messages by default, pages like svc_get_messages, and streams only to the last page', async () => {
    const token = server.token('kim');
    const session = await rawSignIn(base, token);
    const created = await fetch(`${base}/projects`, form(session, { csrf: session.csrf, name: 'Paged' }));
    const path = created.headers.get('location')!;
    const projectId = path.split('/').pop()!;
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message: 'Build it', kind: 'build' });
    const idle = await waitIdle(server.mcpUrl, token, projectId);
    expect(idle.lastWorkflow.status).toBe('completed');
    const all = (await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId })).messages.map(
      (m: { seq: number }) => m.seq,
    );
    expect(all.length).toBeGreaterThan(6);
    const seqs = (text: string) => [...text.matchAll(/data-seq="(\d+)"/g)].map((m) => Number(m[1]));

    const latest = await (await fetch(`${base}${path}?limit=3`, { headers: { Cookie: session.cookie } })).text();
    expect(seqs(latest)).toEqual(all.slice(-3));
    expect(latest).toMatch(
      new RegExp(`data-events="${path}/events\\?session=[\\w-]+&amp;previews=[\\w-]+&amp;after=${all.at(-1)}"`),
    );
    expect(latest).toContain(`?after=${all.at(-4) - 3}&amp;limit=3">Earlier messages`);

    const firstPage = await (
      await fetch(`${base}${path}?after=0&limit=3`, { headers: { Cookie: session.cookie } })
    ).text();
    expect(seqs(firstPage)).toEqual(all.slice(0, 3));
    expect(firstPage).toContain(`?after=${all[2]}&amp;limit=3">Later messages`);
    // Not the end of the conversation: the page's stream sends no messages.
    expect(firstPage).toMatch(new RegExp(`data-events="${path}/events\\?session=[\\w-]+&amp;previews=[\\w-]+"`));
  });
});

describe('live updates from another process', () => {
  it('pushes changes that another process commits to the same store', async () => {
    const quiet = await startTestServer({ builder: 'scripted' });
    const url = quiet.http.url;
    const token = quiet.token('liam');
    const controller = new AbortController();
    // A second service on the same data dir (as a CLI or a second `serve` would be): its own
    // connection and change notices, none shared with the first. Not started: it only writes.
    const other = await createApp({
      dataDir: quiet.dataDir,
      builder: 'scripted',
      logger: silentLogger(),
      plans: GENEROUS_PLANS,
    });
    try {
      const session = await rawSignIn(url, token);
      const created = await fetch(`${url}/projects`, form(session, { csrf: session.csrf, name: 'Shared store' }, url));
      const path = created.headers.get('location')!;
      const projectId = path.split('/').pop()!;
      const stream = await fetch(`${url}${path}/events?after=0`, {
        headers: { Cookie: session.cookie },
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('event: session')) text += decoder.decode((await reader.read()).value, { stream: true });

      // This server's engine stops, so the change below reaches it only through the store.
      await quiet.app.engine.shutdown();
      await other.tools.call(
        { name: 'svc_send_message', arguments: { projectId, message: 'From elsewhere', kind: 'build' } },
        await other.tokens.authenticate(token),
      );
      while (!text.includes('From elsewhere') || !text.includes('data-status=\\"queued\\"')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain('event: messages');
      expect(text).toContain('From elsewhere');
    } finally {
      controller.abort();
      await other.store.close();
      await quiet.close();
    }
  });
});

describe('console behind https', () => {
  it('marks its cookies Secure when the public URL is https', async () => {
    const proxied = await startTestServer({ builder: 'scripted', publicUrl: 'https://builder.example.com' });
    try {
      const signin = await fetch(`${proxied.http.url}/signin`);
      expect(signin.headers.getSetCookie()[0]).toMatch(/; Secure$/);
      const csrf = /name="csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
      const res = await fetch(`${proxied.http.url}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: signin.headers.getSetCookie()[0]!.split(';')[0]!,
        },
        body: new URLSearchParams({ csrf, credential: proxied.token('mia') }).toString(),
      });
      expect(res.status).toBe(303);
      const session = res.headers.getSetCookie().find((c) => c.startsWith('__Host-svc_session='))!;
      expect(session).toMatch(/HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    } finally {
      await proxied.close();
    }
  });
});
