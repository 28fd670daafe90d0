/**
 * Client ID Metadata Documents (MCP authorization spec 2025-11-25, "Client ID Metadata
 * Documents"): a client whose `client_id` is an `https://` URL publishes its metadata at that
 * URL. This server fetches it with strict limits, since the URL comes from whoever opens the
 * authorization page: `https` only (`http` on a loopback host, for local clients), no redirects,
 * at most 64 KiB, 5 s in all, never from a private, link-local or (unless the URL names a loopback
 * host) loopback address; the document must be JSON whose `client_id` is that URL and which lists
 * `redirect_uris`. Such a client has no secret.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import {
  OAuthClientInformationFullSchema,
  type OAuthClientInformationFull,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';

/** Largest metadata document read, in bytes. */
const MAX_DOCUMENT_BYTES = 64 * 1024;
/** Longest time a fetch may take, headers and body, in ms. */
const FETCH_TIMEOUT_MS = 5_000;

/** True when `clientId` names a metadata document (an https URL with a path, or http on loopback). */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!clientId.startsWith('https://') && !clientId.startsWith('http://')) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  // The spec asks for a path component: a bare origin is not a client id.
  if (url.pathname === '/' || url.pathname === '') return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHostname(url.hostname));
}

/** Address ranges a metadata document is never fetched from (RFC 6890 special-purpose blocks). */
const PRIVATE_RANGES: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 3, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];
const PRIVATE = new BlockList();
for (const [address, prefix, type] of PRIVATE_RANGES) PRIVATE.addSubnet(address, prefix, type);
const LOOPBACK_RANGES = new BlockList();
LOOPBACK_RANGES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_RANGES.addAddress('::1', 'ipv6');

/** True when `address` (as resolved) may not be fetched: private, link-local, and loopback unless allowed. */
function refusedAddress(address: string, allowLoopback: boolean): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  const type = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  if (LOOPBACK_RANGES.check(plain, type)) return !allowLoopback;
  return PRIVATE.check(plain, type);
}

/**
 * A DNS lookup that refuses private and link-local addresses (and loopback ones unless the client
 * id names a loopback host itself), so that a client id cannot make this server fetch from its
 * own network (server-side request forgery).
 */
function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      if (list.length === 0 || list.some((a) => refusedAddress(a.address, allowLoopback))) {
        return callback(
          Object.assign(new Error(`${hostname} resolves to an address this server does not fetch from`), {
            code: 'EADDRNOTALLOWED',
          }),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** GETs `url` with the limits above: the status and the body (null when over the size cap). */
function get(url: URL): Promise<{ status: number; body: string }> {
  const allowLoopback = isLoopbackHostname(url.hostname);
  // An address in the URL is connected to without a lookup: check it here.
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) && refusedAddress(literal, allowLoopback))
    return Promise.reject(new Error(`${url.hostname} is an address this server does not fetch from`));
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup: guardedLookup(allowLoopback),
        agent: false,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers['content-length']);
        if (status !== 200 || (Number.isFinite(declared) && declared > MAX_DOCUMENT_BYTES)) {
          res.destroy();
          return resolve({ status, body: status === 200 ? TOO_LARGE : '' });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_DOCUMENT_BYTES) {
            res.destroy();
            resolve({ status, body: TOO_LARGE });
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
        // Cut off (the time limit, the peer): whatever was not settled fails.
        res.on('close', () => reject(new Error('the client metadata document was not received in full')));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Stands for a body over the cap (no JSON document is this string). */
const TOO_LARGE = '\u0000too large';

/**
 * Fetches and checks the metadata document at `clientId`.
 * @throws Error with a reason a person can act on when the URL is not allowed, the fetch fails,
 *   times out, redirects or is too large, the host resolves to a private address, or the
 *   document is not valid client metadata for that id.
 */
export async function fetchClientMetadataDocument(clientId: string): Promise<OAuthClientInformationFull> {
  if (!isMetadataDocumentUrl(clientId)) throw new Error('client_id is not an https URL (or http on a loopback host)');
  const { status, body } = await get(new URL(clientId));
  if (status !== 200)
    throw new Error(`the client metadata document answered HTTP ${status} (redirects are not followed)`);
  if (body === TOO_LARGE) throw new Error(`the client metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error('the client metadata document is not JSON');
  }
  const parsed = OAuthClientInformationFullSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(`the client metadata document is not valid client metadata: ${parsed.error.message}`);
  const metadata = parsed.data;
  if (metadata.client_id !== clientId) throw new Error('the client metadata document names another client_id');
  if (metadata.redirect_uris.length === 0) throw new Error('the client metadata document lists no redirect_uris');
  if (metadata.client_secret !== undefined) throw new Error('a client metadata document must not hold a client_secret');
  // A document-identified client authenticates with PKCE alone.
  return { ...metadata, token_endpoint_auth_method: 'none' };
}
