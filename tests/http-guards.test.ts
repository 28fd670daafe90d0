/**
 * The guards each HTTP route declares (docs/architecture.md "The HTTP pipeline"), over raw HTTP:
 * the Host/Origin check, the form origin, the body limits of `/mcp` and of the console's forms,
 * with their exact statuses and bodies, and the routes that have no such guard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawSignIn } from './console/console-helpers.js';
import { rawHttp, startTestServer, toolResult, type TestServer } from './helpers.js';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  base = server.http.url;
});
afterAll(() => server.close());

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const UUID = '00000000-0000-4000-8000-000000000000';
const refusal = (code: number, message: string, data: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message, data } });
const DENIED = 'Access denied - you do not have permission for this resource';
const HOST_REFUSED = refusal(-32003, DENIED, { reason: 'host_not_allowed' });
const ORIGIN_REFUSED = refusal(-32003, DENIED, { reason: 'origin_not_allowed' });
const MCP_TOO_LARGE = refusal(-32600, 'Invalid request', { reason: 'body_too_large', limitBytes: 1024 * 1024 });

function request(method: string, path: string, headers: Record<string, string>, body?: string) {
  return rawHttp(base + path, { method, headers, ...(body !== undefined && { body }) });
}

describe('host check', () => {
  it.each([
    ['POST', '/mcp'],
    ['GET', '/projects'],
    ['POST', '/projects'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['POST', '/authorize/consent'],
    ['GET', `/previews/${UUID}/`],
    ['GET', `/updates/${UUID}/manifest`],
  ])('%s %s from a foreign Host is 403 host_not_allowed', async (method, path) => {
    const res = await request(method, path, { ...FORM, Host: 'evil.example' }, method === 'POST' ? 'a=b' : undefined);
    expect(res.status).toBe(403);
    expect(res.text).toBe(HOST_REFUSED);
  });

  it('GET /healthz and GET /mcp (405) take no host check', async () => {
    expect((await request('GET', '/healthz', { Host: 'evil.example' })).status).toBe(200);
    expect((await request('GET', '/mcp', { Host: 'evil.example' })).status).toBe(405);
  });

  it('the console checks Origin too; the OAuth routes, called cross-origin by hosts, do not', async () => {
    const page = await request('GET', '/projects', { Origin: 'http://evil.example' });
    expect(page.status).toBe(403);
    expect(page.text).toBe(ORIGIN_REFUSED);
    const metadata = await request('GET', '/.well-known/oauth-authorization-server', { Origin: 'http://evil.example' });
    expect(metadata.status).toBe(200);
    expect(JSON.parse(metadata.text).issuer).toBe(base);
  });
});

describe('form origin', () => {
  it.each([['/projects'], ['/signin'], ['/authorize/consent']])(
    'a form posted to %s from another origin of this host is 403 origin_not_allowed',
    async (path) => {
      const res = await request('POST', path, { ...FORM, Origin: 'http://127.0.0.1:1' }, 'a=b');
      expect(res.status).toBe(403);
      expect(res.text).toBe(ORIGIN_REFUSED);
    },
  );
});

describe('body limits', () => {
  it('a /mcp body over the limit is 413 body_too_large, declared or streamed', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const declared = await request(
      'POST',
      '/mcp',
      { 'Content-Type': 'application/json', 'Content-Length': String(big.length) },
      big,
    );
    const streamed = await request('POST', '/mcp', { 'Content-Type': 'application/json' }, big);
    for (const res of [declared, streamed]) {
      expect(res.status).toBe(413);
      expect(res.text).toBe(MCP_TOO_LARGE);
    }
  });

  it('a console form over 256 KiB is 413, declared or streamed; another content type is 415', async () => {
    const big = 'x'.repeat(256 * 1024 + 1);
    const declared = await request('POST', '/signin', { ...FORM, 'Content-Length': String(big.length) }, big);
    const streamed = await request('POST', '/signin', FORM, big);
    for (const res of [declared, streamed]) {
      expect(res.status).toBe(413);
      expect(res.text).toBe('The form is too large.\n');
    }
    const json = await request('POST', '/signin', { 'Content-Type': 'application/json' }, '{}');
    expect(json.status).toBe(415);
    expect(json.text).toBe('Send the form as application/x-www-form-urlencoded.\n');
  });

  it('a form of exactly 256 KiB is read (the sign-in form then asks for its CSRF token again)', async () => {
    const body = `a=${'x'.repeat(256 * 1024 - 2)}`;
    const res = await request('POST', '/signin', FORM, body);
    expect(res.status).toBe(400);
    expect(res.text).toContain('The sign-in form expired');
  });
});

describe("the console's guards", () => {
  it('session: a page without a valid session cookie goes to the sign-in page, a stale cookie is dropped', async () => {
    const none = await request('GET', '/projects', {});
    expect(none.status).toBe(303);
    expect(none.headers.location).toBe('/signin');
    const stale = await request('POST', '/projects', { ...FORM, Cookie: 'svc_session=stale' }, 'a=b');
    expect(stale.status).toBe(303);
    expect(stale.headers['set-cookie']?.[0]).toMatch(/^svc_session=; /);
  });

  it('form: another method is 405; a form too large is 413, of another type 415, without the CSRF token a 403 page', async () => {
    const alice = await rawSignIn(base, server.token('alice'));
    const put = await request('PUT', '/projects', { ...FORM, Cookie: alice.cookie }, 'a=b');
    expect(put.status).toBe(405);
    expect(put.text).toBe('Method not allowed\n');
    const big = await request(
      'POST',
      '/projects',
      { ...FORM, Cookie: alice.cookie },
      `csrf=${alice.csrf}&name=${'x'.repeat(256 * 1024)}`,
    );
    expect(big.status).toBe(413);
    expect(big.text).toBe('The form is too large.\n');
    const json = await request('POST', '/projects', { 'Content-Type': 'application/json', Cookie: alice.cookie }, '{}');
    expect(json.status).toBe(415);
    const forged = await request('POST', '/projects', { ...FORM, Cookie: alice.cookie }, 'name=Forged');
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('The form is out of date or came from another site');
    expect((await toolResult(server.mcpUrl, server.token('alice'), 'svc_list_projects')).projects).toEqual([]);
  });

  it('rateLimit: each console page carries the rate window of its user; signing out is not counted', async () => {
    const bob = await rawSignIn(base, server.token('bob'));
    const first = await request('GET', '/projects', { Cookie: bob.cookie });
    const second = await request('GET', '/projects', { Cookie: bob.cookie });
    expect(first.status).toBe(200);
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    const out = await request('POST', '/signout', { ...FORM, Cookie: bob.cookie }, `csrf=${bob.csrf}`);
    expect(out.status).toBe(303);
    expect(out.headers['x-ratelimit-remaining']).toBeUndefined();
  });
});
