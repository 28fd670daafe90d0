/**
 * The host names one HTTP listener answers for (docs/contract.md#tokens-and-security; DNS
 * rebinding, `host-check.ts`): loopback, the bind host, `--allowed-hosts` and the public URL's
 * host, and on artifact routes also the artifact base's host (`--artifact-url`).
 */
import { isLoopbackHostname, LOOPBACK_HOSTNAMES } from '../io/loopback-hosts.js';
import type { Logger } from '../logger.js';
import type { PublicUrl } from '../services/public-url.js';
import { createHostCheck, type HostVerdict } from './host-check.js';

/** A check of a request's `Host` and `Origin` headers (either may be undefined). */
type HostCheck = (host: string | undefined, origin: string | undefined) => HostVerdict;

/** The checks of one listener; both pass everything until `bind` (no request arrives before the listener is bound). */
export interface ListenerHosts {
  /** `Host` (and `Origin`) name this server. */
  check: HostCheck;
  /** `Host` names this server or the artifact base. */
  artifactCheck: HostCheck;
}

/** Bind hosts that mean every interface: no Host check can be made without `--allowed-hosts`. */
export const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '']);

/** Checks that pass everything, to be replaced by `bindListenerHosts` once the listener is bound. */
export function openListenerHosts(): ListenerHosts {
  return { check: () => 'ok', artifactCheck: () => 'ok' };
}

/**
 * Sets `hosts`' checks for a listener bound to `host`: none (a warning) for every interface
 * without `allowedHosts`; else the fixed names and the public URL's host (and the artifact base's,
 * for `artifactCheck`), followed as the composition root records the bound address. Warns when
 * bound to an address that is not loopback.
 */
export function bindListenerHosts(
  hosts: ListenerHosts,
  bound: {
    host: string;
    allowedHosts?: string[] | undefined;
    publicUrl: Pick<PublicUrl, 'get' | 'artifacts'>;
    logger: Logger;
  },
): void {
  const { host, allowedHosts, publicUrl, logger } = bound;
  if (WILDCARD_HOSTS.has(host) && !allowedHosts?.length) {
    logger.warn(
      { host },
      'HTTP bound to every interface without --allowed-hosts: Host/Origin checks are off. Put it behind a proxy or pass --allowed-hosts.',
    );
    return;
  }
  // The public URL's host is allowed too; it is known once the composition root has recorded the
  // bound address, so the check follows it.
  const fixed = [...LOOPBACK_HOSTNAMES, host, ...(allowedHosts ?? [])].filter((h) => !WILDCARD_HOSTS.has(h));
  hosts.check = followingCheck(
    fixed,
    () => publicUrl.get(),
    () => [new URL(publicUrl.get()).hostname],
  );
  hosts.artifactCheck = followingCheck(
    fixed,
    () => `${publicUrl.get()} ${publicUrl.artifacts()}`,
    () => [new URL(publicUrl.get()).hostname, new URL(publicUrl.artifacts()).hostname],
  );
  if (!isLoopbackHostname(host))
    logger.warn({ host }, 'HTTP is bound to a non-loopback address: anyone who can reach it can try tokens.');
}

/** A host check of `fixed` and the names `extra` gives, made again whenever `base` changes. */
function followingCheck(fixed: readonly string[], base: () => string, extra: () => string[]): HostCheck {
  let checkedBase = '';
  let check = createHostCheck(fixed);
  return (host, origin) => {
    const now = base();
    if (now !== checkedBase) {
      checkedBase = now;
      check = createHostCheck([...fixed, ...extra()]);
    }
    return check(host, origin);
  };
}
