/**
 * The host names that name this machine's loopback interface, in one place: the Host/Origin check
 * allows them on every listener, OAuth allows `http:` redirect URIs and metadata documents only on
 * them, and the pages that show links warn when a link names one (a phone cannot open it).
 */

/** `localhost`, whose subdomains browsers also resolve to loopback (RFC 6761): per-project origins live under it. */
export const LOCALHOST = 'localhost';

/** Loopback host names as `URL.hostname` spells them (an IPv6 address in brackets). */
export const LOOPBACK_HOSTNAMES: readonly string[] = [LOCALHOST, '127.0.0.1', '[::1]'];

/**
 * True when `hostname` is one of `LOOPBACK_HOSTNAMES`, compared without case and with or without
 * brackets around the IPv6 address (`::1` as a bind address, `[::1]` from a URL).
 */
export function isLoopbackHostname(hostname: string): boolean {
  const bare = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return LOOPBACK_HOSTNAMES.some((name) => name.replace(/^\[(.*)\]$/, '$1') === bare);
}
