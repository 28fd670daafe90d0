/**
 * The anonymous bound (docs/contract.md#limits-and-plans, docs/operators.md "Behind a TLS proxy"): requests
 * still being read count against their token's user, or without a valid token against the client
 * address; behind a trusted proxy (`trustProxy`) that address comes from `X-Forwarded-For`, and an
 * untrusted peer's `X-Forwarded-For` is ignored. Real listener, raw sockets from several loopback
 * addresses; the tests wait on responses, never on time.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientAddressReader, parseTrustedProxies } from '../src/auth/client-address.js';
import { spawnHttpServer } from './bin-helpers.js';
import { BIN, runCommand, startTestServer, tempDir, waitFor, type TestServer } from './helpers.js';

let server: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

const PROXY = '127.0.0.2';
const STRANGER = '127.0.0.3';

/** A POST /mcp whose body never arrives whole: it stays "being read". */
function slowRequest(from: string, headers: Record<string, string> = {}): { text: () => string } {
  const url = new URL(server!.http.url);
  const socket = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: from });
  sockets.push(socket);
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.on('connect', () =>
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n${extra}\r\n{`,
    ),
  );
  return { text: () => text };
}

/** A whole `ping` from local address `from`; resolves with the status and body. */
function ping(from: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const url = new URL(server!.http.url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(url.port),
        localAddress: from,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens `n` slow requests and waits until all but `bound` of them were refused at once. */
async function fill(
  n: number,
  bound: number,
  from: string,
  headers: (i: number) => Record<string, string>,
): Promise<void> {
  const slow = Array.from({ length: n }, (_, i) => slowRequest(from, headers(i)));
  await waitFor(
    () => slow.filter((s) => s.text().startsWith('HTTP/1.1 429')).length === n - bound,
    20_000,
    `${n - bound} refusals`,
  );
  expect(slow.find((s) => s.text().startsWith('HTTP/1.1 429'))!.text()).toContain('"scope":"client"');
}

describe('requests being read, behind a trusted proxy', () => {
  it("two clients behind the same proxy are counted apart; an untrusted peer's X-Forwarded-For is ignored", async () => {
    server = await startTestServer(
      { trustProxy: [PROXY] },
      { maxUnauthenticatedPerAddress: 4, headersTimeoutMs: 5000, requestTimeoutMs: 60_000 },
    );
    // Client 203.0.113.1 behind the proxy fills its bound with slow requests ...
    await fill(10, 4, PROXY, () => ({ 'X-Forwarded-For': '203.0.113.1' }));
    expect((await ping(PROXY, { 'X-Forwarded-For': '203.0.113.1' })).status).toBe(429);
    // ... and client 203.0.113.2 behind the same proxy is still read (401: it has no token).
    expect((await ping(PROXY, { 'X-Forwarded-For': '203.0.113.2' })).status).toBe(401);
    // A chain: the nearest address that is not a trusted proxy is the client.
    expect((await ping(PROXY, { 'X-Forwarded-For': '203.0.113.1, 127.0.0.2' })).status).toBe(429);

    // An untrusted peer cannot spread itself over invented addresses: all its requests are its own.
    await fill(10, 4, STRANGER, (i) => ({ 'X-Forwarded-For': `198.51.100.${i}` }));
    expect((await ping(STRANGER, { 'X-Forwarded-For': '198.51.100.200' })).status).toBe(429);
  });

  it('the per-minute bound on unauthenticated requests counts the forwarded client', async () => {
    server = await startTestServer({ trustProxy: [PROXY], unauthenticatedPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await ping(PROXY, { 'X-Forwarded-For': '203.0.113.1' })).status).toBe(401);
    const refused = await ping(PROXY, { 'X-Forwarded-For': '203.0.113.1' });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toMatchObject({ code: -32005, data: { scope: 'unauthenticated' } });
    expect((await ping(PROXY, { 'X-Forwarded-For': '203.0.113.2' })).status).toBe(401);
  });
});

describe('requests being read with a token', () => {
  it("a request with a valid token counts against its user, not against its address's anonymous bound", async () => {
    server = await startTestServer(
      {},
      { maxUnauthenticatedPerAddress: 4, headersTimeoutMs: 5000, requestTimeoutMs: 60_000 },
    );
    const token = server.token('alice');
    await fill(10, 4, STRANGER, () => ({}));
    // Same address, bound full of anonymous requests: the signed-in client is served.
    expect((await ping(STRANGER, { Authorization: `Bearer ${token}` })).status).toBe(200);
    // A refused token is anonymous.
    expect((await ping(STRANGER, { Authorization: 'Bearer svc_not_a_token' })).status).toBe(429);
    // The user's own bound: its slow requests fill it, from any address.
    await fill(10, 4, PROXY, () => ({ Authorization: `Bearer ${token}` }));
    expect((await ping('127.0.0.4', { Authorization: `Bearer ${token}` })).status).toBe(429);
    expect((await ping('127.0.0.4')).status).toBe(401);
  });
});

describe('--trust-proxy', () => {
  it('takes addresses, CIDR ranges and loopback; refuses anything else at start', async () => {
    expect(parseTrustedProxies(' 10.0.0.0/8, ::1 ,loopback')).toEqual(['10.0.0.0/8', '::1', 'loopback']);
    expect(() => parseTrustedProxies('10.0.0.0/33')).toThrow();
    expect(() => parseTrustedProxies('proxy.example.com')).toThrow();
    const bad = await runCommand(
      process.execPath,
      [BIN, 'serve', '--http', '--port', '0', '--data-dir', tempDir(), '--trust-proxy', '10.0.0.0/8,not-an-address'],
      { timeoutMs: 120_000 },
    );
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--trust-proxy: .*not-an-address/);
    // The real bin behind a trusted loopback proxy: the forwarded clients are counted apart.
    const spawned = await spawnHttpServer(tempDir(), ['--trust-proxy', '127.0.0.0/8']);
    try {
      const post = (forwarded: string) =>
        fetch(spawned.mcpUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': forwarded },
          body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        });
      expect(spawned.stderr()).toContain('"trustProxy":["127.0.0.0/8"]');
      expect((await post('203.0.113.9')).status).toBe(401);
    } finally {
      await spawned.stop();
    }
    // No trusted proxy: the peer, whatever the header says.
    const reader = clientAddressReader([]);
    expect(reader({ socket: { remoteAddress: '10.1.2.3' }, headers: { 'x-forwarded-for': '1.2.3.4' } } as never)).toBe(
      '10.1.2.3',
    );
  });
});
