/**
 * Who may read `/metrics` (docs/metrics.md "Access"): a client on this machine's loopback
 * interface; anyone else only with `Authorization: Bearer <metrics token>` (`--metrics-token`),
 * or everyone when the operator opens the endpoint (`--metrics-public`, for a private network).
 * The metrics name no user or project, but they tell how busy the service is and which tools
 * fail: not for the open internet.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import type { ClientAddressOf } from '../auth/client-address.js';

/** The operator's access settings. */
export interface MetricsAccessOptions {
  /** The bearer token that lets a client off the loopback interface read the metrics; none: loopback only. */
  token?: string;
  /** Everyone may read them (`--metrics-public`). */
  public?: boolean;
}

/**
 * The verdict on one request: `ok`, `unauthenticated` (a token is configured and the request
 * did not present it: 401) or `forbidden` (no token is configured and the client is not on
 * loopback: 403).
 */
export type MetricsVerdict = 'ok' | 'unauthenticated' | 'forbidden';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for an address of the loopback interface: 127.0.0.0/8, ::1, and IPv4-mapped 127.x (`::ffff:127.0.0.1`). */
export function isLoopbackAddress(address: string): boolean {
  try {
    return LOOPBACK.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  } catch {
    return false;
  }
}

/**
 * The access check for `options`.
 * @param clientAddress the request's client address, as the rest of the server reads it (`--trust-proxy`).
 * A request that carries `X-Forwarded-For` or `Forwarded` from a peer whose client address is
 * that peer itself came through a proxy that is not trusted: it is not taken for a loopback
 * client, so that a reverse proxy on this machine does not open the metrics to its clients.
 */
export function metricsAccess(
  options: MetricsAccessOptions,
  clientAddress: ClientAddressOf = (req) => req.socket.remoteAddress ?? '',
): (req: IncomingMessage) => MetricsVerdict {
  const expected = options.token ? digest(options.token) : undefined;
  return (req) => {
    if (options.public) return 'ok';
    if (expected) {
      const presented = bearer(req.headers.authorization);
      if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return 'ok';
    }
    const address = clientAddress(req);
    const proxied =
      (req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined) &&
      address === req.socket.remoteAddress;
    if (isLoopbackAddress(address) && !proxied) return 'ok';
    return expected ? 'unauthenticated' : 'forbidden';
  };
}

/** A fixed-length digest, so that comparing two tokens takes the same time whatever they hold. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function bearer(header: string | undefined): string | undefined {
  const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return match?.[1];
}
