/**
 * Connections per peer address are bounded under pressure (docs/contract.md#limits-and-plans): one anonymous
 * client that opens connections and sends half a request on each used to hold every connection of
 * the listener (each for the header timeout, renewed at will), so that nobody, `/healthz`
 * included, could connect. The attacker here connects from 127.0.0.2, everyone else from
 * 127.0.0.1 (both loopback on Linux).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, waitFor, type TestServer } from './helpers.js';

const TOTAL = 60;
const PER_ADDRESS = 20;
let server: TestServer;

beforeAll(async () => {
  // A long header timeout: nothing but the bound closes the attacker's connections during the test.
  server = await startTestServer(
    {},
    {
      maxConnections: TOTAL,
      maxConnectionsPerAddress: PER_ADDRESS,
      headersTimeoutMs: 120_000,
      requestTimeoutMs: 120_000,
    },
  );
});
afterAll(async () => {
  await server.close();
});

it('one address holds at most its share of the connections; another still connects, and /healthz answers', async () => {
  const { port } = new URL(server.mcpUrl);
  const sockets: Socket[] = [];
  let closed = 0;
  try {
    for (let i = 0; i < TOTAL; i++) {
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.2' }, () =>
        socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      );
      socket.on('error', () => undefined);
      socket.on('close', () => closed++);
      sockets.push(socket);
    }
    // Once half the connections are open, every one past the address's share is closed as it opens.
    const held = Math.max(PER_ADDRESS, TOTAL / 2);
    await waitFor(() => closed === TOTAL - held, 15_000, `the server to close ${TOTAL - held} connections`);
    const health = await fetch(`${new URL(server.mcpUrl).origin}/healthz`);
    expect(health.status).toBe(200);
    expect(closed).toBe(TOTAL - held);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});

it('a trusted proxy (--trust-proxy) is not bounded: every client behind it shares its address', async () => {
  const proxied = await startTestServer(
    { trustProxy: ['127.0.0.2'] },
    { maxConnections: 4, maxConnectionsPerAddress: 1, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 },
  );
  const { port } = new URL(proxied.mcpUrl);
  const sockets: Socket[] = [];
  try {
    // Four requests half sent at once from the proxy's address, then finished: each is answered.
    const answers = Array.from({ length: 4 }, () => {
      let text = '';
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.2' }, () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      );
      sockets.push(socket);
      return new Promise<string>((resolve) => {
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.on('error', () => resolve(text));
        socket.on('close', () => resolve(text));
      });
    });
    await waitFor(
      () => sockets.every((s) => s.readyState === 'open' && s.bytesWritten > 0),
      15_000,
      'every request to be half sent',
    );
    for (const socket of sockets) socket.write('Connection: close\r\n\r\n');
    for (const text of await Promise.all(answers)) expect(text).toMatch(/^HTTP\/1\.1 200/);
  } finally {
    for (const socket of sockets) socket.destroy();
    await proxied.close();
  }
});
