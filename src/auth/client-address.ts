/**
 * The address of the client behind an HTTP request, for the bounds kept per client address
 * (docs/operators.md "Behind a TLS proxy"; docs/contract.md#limits-and-plans). By default it is the socket's
 * peer. With trusted proxies (`--trust-proxy`), a request whose peer is one of them is taken
 * from `X-Forwarded-For`: the nearest address in it that is not itself a trusted proxy, as
 * `proxy-addr` (the library express uses) reads it. A peer that is not trusted is the client,
 * whatever its `X-Forwarded-For` says.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/** Reads the client address of a request (never throws; `"unknown"` when the socket has none). */
export type ClientAddressOf = (req: IncomingMessage) => string;

/**
 * Checks and compiles a trusted-proxy list: addresses and CIDR ranges (`10.0.0.0/8`,
 * `::1/128`), or `proxy-addr`'s names `loopback`, `linklocal`, `uniquelocal`.
 * @throws TypeError naming the entry that is not an address or range.
 */
function compileTrustedProxies(list: readonly string[]): (address: string, hop: number) => boolean {
  return proxyAddr.compile([...list]);
}

/**
 * The client address reader for the trusted proxies `list` (empty: the socket's peer always).
 * @throws TypeError for an entry that is not an address or range (see `compileTrustedProxies`).
 */
export function clientAddressReader(list: readonly string[] = []): ClientAddressOf {
  if (list.length === 0) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = compileTrustedProxies(list);
  return (req) => {
    // proxy-addr reads the peer from the socket; a socket already gone has none.
    if (!req.socket.remoteAddress) return 'unknown';
    return proxyAddr(req, trust);
  };
}

/**
 * Whether a socket peer is one of the trusted proxies `list` (empty: none is). The bound on
 * connections per peer address does not apply to them: every client behind them shares their address.
 * @throws TypeError for an entry that is not an address or range (see `compileTrustedProxies`).
 */
export function trustedPeerReader(list: readonly string[] = []): (address: string) => boolean {
  if (list.length === 0) return () => false;
  const trust = compileTrustedProxies(list);
  return (address) => trust(address, 0);
}

/** Parses the `--trust-proxy` option: comma-separated addresses or ranges, checked. @throws TypeError */
export function parseTrustedProxies(text: string): string[] {
  const list = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  compileTrustedProxies(list);
  return list;
}
