/**
 * Client ID Metadata Documents (MCP authorization spec 2025-11-25, "Client ID Metadata
 * Documents"): a client whose `client_id` is an `https://` URL publishes its metadata at that
 * URL. This server fetches it with strict limits, since the URL comes from whoever opens the
 * authorization page: `https` only (`http` on a loopback host, for local clients), no redirects,
 * at most 64 KiB, 5 s in all; the document must be JSON whose `client_id` is that URL and which
 * lists `redirect_uris`. Such a client has no secret.
 */
import { OAuthClientInformationFullSchema, type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Largest metadata document read, in bytes. */
const MAX_DOCUMENT_BYTES = 64 * 1024;
/** Longest time a fetch may take, headers and body, in ms. */
const FETCH_TIMEOUT_MS = 5_000;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

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
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

/**
 * Fetches and checks the metadata document at `clientId`.
 * @throws Error with a reason a person can act on when the URL is not allowed, the fetch fails,
 *   times out, redirects or is too large, or the document is not valid client metadata for that id.
 */
export async function fetchClientMetadataDocument(clientId: string): Promise<OAuthClientInformationFull> {
  if (!isMetadataDocumentUrl(clientId)) throw new Error('client_id is not an https URL (or http on a loopback host)');
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const response = await fetch(clientId, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`the client metadata document answered HTTP ${response.status} (redirects are not followed)`);
  }
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_DOCUMENT_BYTES) {
    await response.body?.cancel();
    throw new Error(`the client metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  }
  const text = await readCapped(response, MAX_DOCUMENT_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('the client metadata document is not JSON');
  }
  const parsed = OAuthClientInformationFullSchema.safeParse(json);
  if (!parsed.success) throw new Error(`the client metadata document is not valid client metadata: ${parsed.error.message}`);
  const metadata = parsed.data;
  if (metadata.client_id !== clientId) throw new Error('the client metadata document names another client_id');
  if (metadata.redirect_uris.length === 0) throw new Error('the client metadata document lists no redirect_uris');
  if (metadata.client_secret !== undefined) throw new Error('a client metadata document must not hold a client_secret');
  // A document-identified client authenticates with PKCE alone.
  return { ...metadata, token_endpoint_auth_method: 'none' };
}

async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the client metadata document is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
