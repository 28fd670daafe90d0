/**
 * The bounds an HTTP listener puts on its connections (docs/contract.md#tokens-and-security; the
 * README hardening): connections per peer address under pressure, a connection that never sends
 * a byte, and malformed requests or slow clients.
 */
import type { Server, ServerResponse } from 'node:http';

/** The bounds of one listener. Times in ms. */
export interface ConnectionBounds {
  /** Open connections a peer address keeps once half of `server.maxConnections` are open. */
  maxPerAddress: number;
  /** Whether a socket peer is a trusted proxy, exempt from `maxPerAddress`. */
  trustedPeer: (address: string) => boolean;
  /** Time allowed to receive the request headers; also how long a silent connection lives. */
  headersTimeoutMs: number;
}

/**
 * Bounds `server`'s connections. Connections per peer address, under pressure: once half of
 * maxConnections are open, a peer that holds its share (maxPerAddress) gets no more, so one client
 * (a flood of half-sent requests, each held until the header timeout) cannot take every connection
 * and lock everyone out, while a busy client below that pressure is never cut.
 */
export function boundConnections(server: Server, bounds: ConnectionBounds): void {
  const pressure = Math.floor(server.maxConnections / 2);
  const connectionsOf = new Map<string, number>();
  let openConnections = 0;
  server.on('connection', (socket) => {
    const peer = socket.remoteAddress;
    const open = peer ? (connectionsOf.get(peer) ?? 0) : 0;
    if (peer && open >= bounds.maxPerAddress && openConnections >= pressure && !bounds.trustedPeer(peer)) {
      socket.destroy();
      return;
    }
    openConnections++;
    if (peer) connectionsOf.set(peer, open + 1);
    socket.once('close', () => {
      openConnections--;
      if (!peer) return;
      const left = (connectionsOf.get(peer) ?? 1) - 1;
      if (left <= 0) connectionsOf.delete(peer);
      else connectionsOf.set(peer, left);
    });
  });
  // A connection that never sends a byte is closed after the header timeout, like a slow one. It
  // is told by the bytes read, not by a 'data' listener: one on the socket would take its reads
  // from node:http's parser, which then reads every request through a JavaScript stream (a fifth
  // of a small request's CPU; docs/performance.md "The reply memo").
  server.on('connection', (socket) => {
    const idle = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, bounds.headersTimeoutMs);
    idle.unref();
    socket.once('close', () => clearTimeout(idle));
  });
  // Malformed requests and slow clients (header or request timeout): answer if we still can, then drop the connection.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const status =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : '400 Bad Request';
    const response = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !response?.headersSent) {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
    } else socket.destroy();
  });
}
