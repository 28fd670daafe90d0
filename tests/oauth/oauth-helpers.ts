/**
 * Helpers of the OAuth tests (docs/security.md#sign-in-with-oauth): an in-memory `OAuthClientProvider` for the SDK
 * client, the test playing the browser on the consent page (GET the page, read its form, POST it,
 * read the 302), raw calls of the token and registration endpoints, PKCE pairs, and loopback
 * servers standing in for a client's redirect URI and its Client ID Metadata Document.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

/**
 * An OAuth client of the MCP SDK that keeps everything in memory. `redirectToAuthorization`
 * records the URL (the test then plays the browser, or hands it to Chromium).
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  /** Every authorization URL the SDK asked to open, in order. */
  readonly authorizationUrls: URL[] = [];
  /** Every `state` the SDK put in an authorization URL. */
  readonly states: string[] = [];
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  /**
   * @param redirectUri where the authorization server sends the browser back (never opened by the headless test)
   * @param clientName shown on the consent page
   * @param clientMetadataUrl when set, the SDK uses it as the client_id (Client ID Metadata Document) if the server supports it
   */
  constructor(
    readonly redirectUri: string,
    readonly clientName = 'OAuth test client',
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    const state = randomBytes(12).toString('base64url');
    this.states.push(state);
    return state;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  /** The last authorization URL; throws when the SDK never asked for one. */
  lastAuthorizationUrl(): URL {
    const url = this.authorizationUrls.at(-1);
    if (!url) throw new Error('the SDK never called redirectToAuthorization');
    return url;
  }
}

/** An SDK client and its transport, authorizing through `provider`. */
export function oauthClient(
  mcpUrl: string,
  provider: OAuthClientProvider,
): { client: Client; transport: StreamableHTTPClientTransport } {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  const client = new Client({ name: 'oauth-test-client', version: '1.0.0' });
  return { client, transport };
}

/**
 * The first connect of a client without tokens: the SDK gets a 401, discovers the metadata,
 * registers (or uses its metadata URL) and asks to open the authorization URL, then fails with
 * `UnauthorizedError`. Returns that URL.
 */
export async function connectUntilRedirect(
  client: Client,
  transport: StreamableHTTPClientTransport,
  provider: MemoryOAuthProvider,
): Promise<URL> {
  const before = provider.authorizationUrls.length;
  let failure: unknown = null;
  try {
    await client.connect(transport);
  } catch (error) {
    failure = error;
  }
  if (!(failure instanceof UnauthorizedError))
    throw new Error(`expected UnauthorizedError from connect, got ${String(failure)}`);
  if (provider.authorizationUrls.length !== before + 1)
    throw new Error('the SDK did not ask to open an authorization URL');
  return provider.lastAuthorizationUrl();
}

/** A minimal cookie jar: the consent page may set a cookie its form POST must carry back. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      if (at > 0) this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }
  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { Cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
}

/** The value of the `<input name=NAME ... value=...>` in `html` (attributes in any order), or undefined. */
export function inputValue(html: string, name: string): string | undefined {
  for (const tag of html.match(/<input\b[^>]*>/gi) ?? []) {
    if (attribute(tag, 'name') === name) return decodeEntities(attribute(tag, 'value') ?? '');
  }
  return undefined;
}

/** Whether `html` has an input named `name`. */
export function hasInput(html: string, name: string): boolean {
  return (html.match(/<input\b[^>]*>/gi) ?? []).some((tag) => attribute(tag, 'name') === name);
}

function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39|#x27);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[e]!,
  );
}

/** The consent page as the browser got it. */
export interface ConsentPage {
  status: number;
  html: string;
  /** Hidden `request` and `csrf` inputs of the form. */
  request: string | undefined;
  csrf: string | undefined;
  jar: CookieJar;
  headers: Headers;
  /** When the authorization endpoint redirected instead of answering with a page. */
  location: string | null;
}

/** GETs an authorization URL without following redirects, as a browser opening it would. */
export async function openConsent(authorizationUrl: URL | string, jar = new CookieJar()): Promise<ConsentPage> {
  const res = await fetch(authorizationUrl, { redirect: 'manual', headers: jar.header() });
  jar.take(res.headers);
  const html = await res.text();
  return {
    status: res.status,
    html,
    request: inputValue(html, 'request'),
    csrf: inputValue(html, 'csrf'),
    jar,
    headers: res.headers,
    location: res.headers.get('location'),
  };
}

/** The answer of `POST /authorize/consent`. */
export interface ConsentAnswer {
  status: number;
  location: string | null;
  html: string;
}

/** POSTs the consent form of `page` (fields may be overridden or removed with `undefined`). */
export async function submitConsent(
  issuer: string,
  page: ConsentPage,
  fields: Record<string, string | undefined>,
): Promise<ConsentAnswer> {
  const form = new URLSearchParams();
  const all: Record<string, string | undefined> = { request: page.request, csrf: page.csrf, ...fields };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) form.set(k, v);
  const res = await fetch(`${issuer}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...page.jar.header() },
    body: form.toString(),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

/**
 * Plays the browser through the consent page: opens the authorization URL, approves with
 * `credential` and returns the `code` of the redirect (checking it carries the request's `state`).
 */
export async function approveInBrowser(issuer: string, authorizationUrl: URL, credential: string): Promise<string> {
  const page = await openConsent(authorizationUrl);
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${page.html.slice(0, 500)}`);
  const answer = await submitConsent(issuer, page, { credential, decision: 'approve' });
  if (answer.status !== 302 || !answer.location)
    throw new Error(`consent POST answered ${answer.status}: ${answer.html.slice(0, 500)}`);
  const back = new URL(answer.location);
  const state = authorizationUrl.searchParams.get('state');
  if (back.searchParams.get('state') !== state)
    throw new Error(`the redirect's state ${back.searchParams.get('state')} is not the request's ${state}`);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code in the redirect: ${answer.location}`);
  return code;
}

/** A PKCE pair (RFC 7636, S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A client registered with RFC 7591 dynamic registration. */
export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  client_name?: string;
}

/** Registers a public client (no secret wanted) with `POST /register`; throws unless 201. */
export async function registerClient(
  issuer: string,
  redirectUris: string[],
  clientName = 'Raw test client',
): Promise<RegisteredClient> {
  const res = await fetch(`${issuer}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${JSON.stringify(body)}`);
  return body as RegisteredClient;
}

/** The answer of the token endpoint. */
export interface TokenAnswer {
  status: number;
  body: any;
}

/** POSTs a form to `/token` (the client's id and secret, when it has one, are added). */
export async function tokenRequest(
  issuer: string,
  client: RegisteredClient,
  params: Record<string, string>,
): Promise<TokenAnswer> {
  const form = new URLSearchParams({
    client_id: client.client_id,
    ...(client.client_secret && { client_secret: client.client_secret }),
    ...params,
  });
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: res.status, body };
}

/** An authorization URL for a raw client (every parameter can be overridden or removed with `undefined`). */
export function authorizeUrl(issuer: string, params: Record<string, string | undefined>): URL {
  const url = new URL(`${issuer}/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
}

/** One authorization code obtained through the consent page by a raw client. */
export interface RawCode {
  code: string;
  verifier: string;
  redirectUri: string;
  state: string;
}

/**
 * Runs a raw authorization request and approves it with `credential`; returns the code, the
 * verifier and what was sent. `overrides` change the authorization parameters.
 */
export async function rawCode(
  issuer: string,
  client: RegisteredClient,
  credential: string,
  overrides: Record<string, string | undefined> = {},
): Promise<RawCode> {
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString('hex');
  const redirectUri = client.redirect_uris[0]!;
  const url = authorizeUrl(issuer, {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: `${issuer}/mcp`,
    ...overrides,
  });
  const code = await approveInBrowser(issuer, url, credential);
  return { code, verifier, redirectUri, state };
}

/** Exchanges a raw code for tokens; throws unless 200. */
export async function exchange(
  issuer: string,
  client: RegisteredClient,
  got: RawCode,
  extra: Record<string, string> = {},
): Promise<OAuthTokens> {
  const answer = await tokenRequest(issuer, client, {
    grant_type: 'authorization_code',
    code: got.code,
    code_verifier: got.verifier,
    redirect_uri: got.redirectUri,
    resource: `${issuer}/mcp`,
    ...extra,
  });
  if (answer.status !== 200)
    throw new Error(`token endpoint answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as OAuthTokens;
}

/** The HTTP status of `tools/list` on /mcp with `token` as the Bearer token (fresh connection each time). */
export async function mcpStatus(mcpUrl: string, token: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A loopback HTTP(S) server of a test, with the requests it received. */
export interface LoopbackServer {
  url: string;
  requests: URL[];
  close(): Promise<void>;
}

/**
 * Starts a loopback HTTP server on a free port. `handle` answers; by default a small page
 * ("signed in, you can close this tab"), as a native client's redirect listener would.
 */
export async function loopbackServer(
  handle?: (req: IncomingMessage, res: ServerResponse) => void,
  tls?: { key: string; cert: string },
): Promise<LoopbackServer> {
  const requests: URL[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    if (handle) return handle(req, res);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Signed in</title><p>Signed in. You can close this tab.</p>');
  };
  const server: Server = tls ? createHttpsServer(tls, listener) : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * A self-signed certificate for 127.0.0.1 made with the `openssl` command, written to `dir`
 * (the server under test trusts it through NODE_EXTRA_CA_CERTS). Null when openssl is missing.
 */
export function loopbackCertificate(dir: string): { key: string; cert: string; certFile: string } | null {
  const keyFile = join(dir, 'loopback-key.pem');
  const certFile = join(dir, 'loopback-cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore', timeout: 60_000 },
    );
  } catch {
    return null;
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
