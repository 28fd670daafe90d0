/**
 * DNS-rebinding protection (docs/contract.md#tokens-and-security): the `Host` header, and the `Origin` header when a
 * browser sends one, must name a host this server answers for.
 */

/** Host name of a `Host` header value (`[::1]:3333` -> `::1`, `Example.com:80` -> `example.com`). */
function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']') === -1 ? undefined : value.indexOf(']'));
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

/** `ok`, or why a request is refused (sent as `data.reason` with -32003). */
export type HostVerdict = 'ok' | 'host_not_allowed' | 'origin_not_allowed';

/**
 * @param allowed host names (lower case); null disables the check (a wildcard bind without an
 *   allow-list, which the server warns about at start).
 */
export function createHostCheck(
  allowed: readonly string[] | null,
): (host: string | undefined, origin: string | undefined) => HostVerdict {
  if (allowed === null) return () => 'ok';
  const set = new Set(allowed.map((h) => h.toLowerCase().replace(/^\[|\]$/g, '')));
  return (host, origin) => {
    if (!host || !set.has(hostnameOf(host))) return 'host_not_allowed';
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '').toLowerCase();
      } catch {
        return 'origin_not_allowed';
      }
      if (!set.has(originHost)) return 'origin_not_allowed';
    } else if (origin === 'null') return 'origin_not_allowed';
    return 'ok';
  };
}
