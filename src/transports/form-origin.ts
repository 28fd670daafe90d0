/**
 * Browser forms that change something (the web console's POSTs, the OAuth consent decision) are
 * accepted only from this server's own origin (docs/console.md "Web console", "Sign in with OAuth").
 *
 * The Host/Origin check (`host-check.ts`) compares host names only, and a browser shares cookies,
 * SameSite=Strict ones included, with every port of a host: a page on another port of the same
 * host (a preview on the artifact origin, any local web server) is same-site, so the browser
 * sends the console session with the forms that page posts. The console's forms carry a CSRF
 * token of the session, but a consent decision approved by the console session carries only the
 * authorization request's token, which whoever opened the request knows; the exact origin is
 * what tells the person's own page from another one there.
 */

/** The origin of `url`, or null when it is not a URL. */
function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether a form post may be taken: true without an `Origin` header (not a browser's form, so no
 * browser's cookies either), or when it is exactly the public URL's origin or the origin the
 * browser addressed (`http://` or `https://` and the `Host` header, which the host check has
 * already limited to this server's names).
 * @param origin the request's `Origin` header; `host` its `Host` header; `publicBase` the public URL.
 */
export function formFromOwnOrigin(origin: string | undefined, host: string | undefined, publicBase: string): boolean {
  if (origin === undefined) return true;
  const presented = originOf(origin);
  if (presented === null) return false;
  const own = [originOf(publicBase), ...(host ? [originOf(`http://${host}`), originOf(`https://${host}`)] : [])];
  return own.includes(presented);
}
