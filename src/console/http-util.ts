/**
 * Small HTTP pieces of the web console: cookies, bounded form bodies, and HTML responses with the
 * console's security headers (a strict Content Security Policy: scripts and styles only from the
 * console's own static files, no inline script).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_ABORTED, BODY_TOO_LARGE, readBody } from '../io/request-body.js';
import type { SafeHtml } from './html.js';

/** Largest form body the console reads, in bytes (an instruction is at most 20 000 characters). */
const FORM_LIMIT_BYTES = 256 * 1024;

/** The cookies of a request (first value of each name). */
export function readCookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  const seen = new Set<string>();
  for (const piece of (req.headers.cookie ?? '').split(';')) {
    const eq = piece.indexOf('=');
    if (eq === -1) continue;
    const name = piece.slice(0, eq).trim();
    // A name sent twice (one of them set with another Path by a page on another port of this
    // host, which shares the host's cookies) is ambiguous: neither value is used.
    if (seen.has(name)) out.set(name, '');
    else out.set(name, piece.slice(eq + 1).trim());
    seen.add(name);
  }
  return out;
}

/** True when the request carries the cookie `name` more than once (see `readCookies`). */
export function cookieSentTwice(req: IncomingMessage, name: string): boolean {
  let count = 0;
  for (const piece of (req.headers.cookie ?? '').split(';'))
    if (piece.slice(0, piece.indexOf('=')).trim() === name) count += 1;
  return count > 1;
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Strict, Path=/, Secure when `secure`; `maxAgeSeconds` 0 deletes it. */
export function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Outcome of reading a form body. */
export type FormBody = URLSearchParams | 'too_large' | 'unsupported' | 'aborted';

/** Reads an `application/x-www-form-urlencoded` body of at most 256 KiB (with the one body reader, `io/request-body.ts`). */
export async function readForm(req: IncomingMessage): Promise<FormBody> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    return 'unsupported';
  }
  const body = await readBody(req, FORM_LIMIT_BYTES);
  if (body === BODY_TOO_LARGE) return 'too_large';
  if (body === BODY_ABORTED) return 'aborted';
  return new URLSearchParams(body);
}

/**
 * The console's Content Security Policy: nothing inline, scripts, styles and the event stream
 * from this origin only, frames only from the artifact origin (the web preview).
 */
export function contentSecurityPolicy(frameOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${frameOrigin}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Headers every console response carries. */
const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** Sends a page. */
export function sendHtml(
  res: ServerResponse,
  status: number,
  page: SafeHtml,
  csp: string,
  headers: Record<string, string | string[]> = {},
): void {
  const body = page.value;
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Redirects a browser with 303 See Other (after a form, so that reloading never posts again). */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(303, { ...COMMON_HEADERS, Location: location, 'Content-Length': '0', ...headers });
  res.end();
}
