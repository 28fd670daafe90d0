/**
 * The consent page (docs/security.md "Sign in with OAuth"): server-rendered HTML that works without
 * JavaScript. Every piece of text from a client or a request is escaped; the page sends a strict
 * Content-Security-Policy (no script at all, its one style by hash, forms only to this server and
 * the client's redirect URI) and may not be framed.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { escapeHtml } from '../io/html-escape.js';

/** What the page shows and submits. */
export interface ConsentView {
  /** The client's name as it registered it (or its client id). */
  clientName: string;
  /** Its client id, shown small so that a person can tell two clients of the same name apart. */
  clientId: string;
  /** Where the browser goes after the decision. */
  redirectUri: string;
  /** Id of the pending authorization request. */
  requestId: string;
  csrf: string;
  /** A message shown above the form (a refused credential), or null. */
  error: string | null;
  /**
   * The browser's console session, when it has one: no credential field then, and the form
   * carries the session's CSRF token so that an approval proves it came from this page.
   */
  signedInAs: { userName: string; csrf: string } | null;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}.client{font-weight:600}.muted{color:#555;font-size:.9rem;word-break:break-all}
.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6rem .8rem;border-radius:6px}
label{display:block;margin:1.2rem 0 .3rem;font-weight:600}input[type=password]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
.buttons{margin-top:1.4rem;display:flex;gap:.8rem}button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #888;background:#f4f4f4;cursor:pointer}
button.approve{background:#1f6feb;border-color:#1f6feb;color:#fff}`;

const STYLE_HASH = createHash('sha256').update(STYLE, 'utf8').digest('base64');

/** The host a redirect URI sends the browser to (or its scheme, for an app's private-use scheme). */
function redirectTarget(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host || `${url.protocol}${url.pathname.split('/').find(Boolean) ?? ''}`;
  } catch {
    return redirectUri;
  }
}

/**
 * The page's Content-Security-Policy. `form-action` names the redirect URI's origin as well:
 * browsers apply it to the redirect that answers the form too.
 */
function consentCsp(redirectUri: string | null): string {
  let target = '';
  if (redirectUri) {
    try {
      const url = new URL(redirectUri);
      target = url.origin !== 'null' ? ` ${url.origin}` : ` ${url.protocol}`;
    } catch {
      target = '';
    }
  }
  return `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * Writes headers every page of the authorization flow carries. `Referrer-Policy: same-origin`
 * keeps the authorization request's URL from the client's redirect URI as `no-referrer` would,
 * while the browser still names this page's origin in the `Origin` of the decision it posts
 * (under `no-referrer` it sends `Origin: null`, which the server refuses: form-origin.ts).
 */
function pageHeaders(res: ServerResponse, status: number, csp: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Content-Security-Policy': csp,
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
  });
}

function layout(title: string, main: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${main}</main></body></html>
`;
}

/** Sends the consent page with `status` (200, or 401 after a refused credential). */
export function sendConsentPage(res: ServerResponse, view: ConsentView, status = 200): void {
  const name = escapeHtml(view.clientName.slice(0, 120));
  const credential = view.signedInAs
    ? `<p>Signed in as <strong>${escapeHtml(view.signedInAs.userName)}</strong>.</p>
<input type="hidden" name="session_csrf" value="${escapeHtml(view.signedInAs.csrf)}">`
    : `<label for="credential">Your API token or one-time login code</label>
<input type="password" id="credential" name="credential" autocomplete="off" required>
<p class="muted">Get a login code with <code>mobile-builder-mcp login-code --user NAME</code> on the server.</p>`;
  const main = `<h1>Allow <span class="client">${name}</span> to use mobile-builder-mcp?</h1>
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<p><span class="client">${name}</span> will be able to use every tool of this server on your projects as you: create and list projects, send build and deploy instructions, answer questions and read their results.</p>
<p>After your decision the browser goes to <strong>${escapeHtml(redirectTarget(view.redirectUri))}</strong>.</p>
<p class="muted">Client id: ${escapeHtml(view.clientId.slice(0, 300))}</p>
<form method="post" action="/authorize/consent">
<input type="hidden" name="request" value="${escapeHtml(view.requestId)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
${credential}
<div class="buttons"><button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form>`;
  const body = layout(`Allow ${view.clientName.slice(0, 120)}?`, main);
  pageHeaders(res, status, consentCsp(view.redirectUri), body);
  res.end(body);
}

/** Sends a page that ends the flow without a redirect (an unknown or used request, a bad CSRF token). */
export function sendProblemPage(res: ServerResponse, status: number, message: string): void {
  const body = layout(
    'Sign-in failed',
    `<h1>Sign-in failed</h1><p class="error" role="alert">${escapeHtml(message)}</p><p>Start the sign-in again from your MCP host.</p>`,
  );
  pageHeaders(res, status, consentCsp(null), body);
  res.end(body);
}
