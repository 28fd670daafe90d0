/**
 * The OAuth clients this server knows (the SDK's `OAuthRegisteredClientsStore`), kept in the
 * store: clients registered by RFC 7591 dynamic registration, and clients identified by a Client
 * ID Metadata Document (fetched on first use, cached for `METADATA_CACHE_SECONDS`).
 */
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { hashToken } from '../auth/api-token.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { OAuthRepo } from '../store/repos.js';
import { fetchClientMetadataDocument, isMetadataDocumentUrl } from './client-metadata-document.js';
import { isLoopbackHostname } from '../io/loopback-hosts.js';

/** How long a fetched metadata document is used before it is fetched again, in seconds. */
const METADATA_CACHE_SECONDS = 600;

/** Most redirect URIs one registration may list (a host needs one or two). */
const MAX_REDIRECT_URIS = 20;

/**
 * Why a redirect URI may not be registered, or null when it may (OAuth 2.1 section 2.3.1):
 * `https`, `http` on a loopback host (native apps, RFC 8252), or an app's private-use scheme;
 * never a fragment, never `file:` and the like.
 */
function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI ${uri} is not a URL`;
  }
  if (url.hash) return `redirect URI ${uri} has a fragment`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:')
    return isLoopbackHostname(url.hostname)
      ? null
      : `redirect URI ${uri} is http on a host other than loopback: use https`;
  if (['file:', 'javascript:', 'data:', 'vbscript:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:'].includes(url.protocol))
    return `redirect URI ${uri} has a scheme that cannot receive a code`;
  // A private-use scheme (`com.example.app:/callback`, `cursor://...`) of a native app.
  return null;
}

/** Whether `url` names a loopback host (false for text that is not a URL). */
function onLoopback(url: string): boolean {
  try {
    return isLoopbackHostname(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** The clients store on our database. */
export class StoredClients implements OAuthRegisteredClientsStore {
  /** @param issuer this server's issuer URL, read at each use. */
  constructor(
    private readonly repo: OAuthRepo,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly issuer: () => string,
  ) {}

  async getClient(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    if (clientId.length > 2048) return undefined;
    const row = await this.repo.findClient(clientId);
    if (row && row.kind === 'registered') return JSON.parse(row.metadata) as OAuthClientInformationFull;
    if (!isMetadataDocumentUrl(clientId)) return undefined;
    // A client id on a loopback host is a client on this server's own machine: only a server that
    // is itself on a loopback address serves such clients. A public server would otherwise GET any
    // URL of its own loopback for whoever opens the authorization page.
    if (onLoopback(clientId) && !onLoopback(this.issuer())) {
      this.logger.warn(
        { clientId },
        'client metadata document refused: a loopback client id at a server that is not on loopback',
      );
      return undefined;
    }
    const now = this.clock();
    if (row && row.expiresAt && Date.parse(row.expiresAt) > now.getTime())
      return JSON.parse(row.metadata) as OAuthClientInformationFull;
    try {
      const metadata = await fetchClientMetadataDocument(clientId);
      // A document's redirect URIs follow the rules of a registered client's.
      const problem = metadata.redirect_uris.map(redirectUriProblem).find((p) => p !== null);
      if (problem) throw new Error(problem);
      await this.repo.saveClient({
        clientId,
        kind: 'metadata_document',
        metadata: JSON.stringify(metadata),
        createdAt: row?.createdAt ?? now.toISOString(),
        expiresAt: new Date(now.getTime() + METADATA_CACHE_SECONDS * 1000).toISOString(),
      });
      return metadata;
    } catch (error) {
      this.logger.warn({ clientId, reason: (error as Error).message }, 'client metadata document refused');
      return undefined;
    }
  }

  /**
   * Stores a dynamically registered client (the SDK has checked the metadata and generated the id
   * and, for confidential clients, the secret). The secret is stored as its SHA-256 only: the
   * client gets it once in the registration response, and `hashPresentedClientSecret` hashes the
   * one it presents at `/token` and `/revoke` before the SDK compares the two.
   * @throws InvalidClientMetadataError for a redirect URI this server will not send codes to.
   */
  async registerClient(
    client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>,
  ): Promise<OAuthClientInformationFull> {
    const full = client as OAuthClientInformationFull;
    if (full.redirect_uris.length === 0)
      throw new InvalidClientMetadataError('redirect_uris must list at least one URI');
    if (full.redirect_uris.length > MAX_REDIRECT_URIS)
      throw new InvalidClientMetadataError(`redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs`);
    for (const uri of full.redirect_uris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new InvalidClientMetadataError(problem);
    }
    if (full.client_name !== undefined && full.client_name.length > 200)
      throw new InvalidClientMetadataError('client_name is longer than 200 characters');
    if (full.grant_types?.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw new InvalidClientMetadataError('grant_types may hold only authorization_code and refresh_token');
    }
    const stored = full.client_secret === undefined ? full : { ...full, client_secret: hashToken(full.client_secret) };
    await this.repo.saveClient({
      clientId: full.client_id,
      kind: 'registered',
      metadata: JSON.stringify(stored),
      createdAt: this.clock().toISOString(),
      expiresAt: null,
    });
    return full;
  }
}

/**
 * Express middleware for `/token` and `/revoke`, after the form is parsed: replaces the presented
 * `client_secret` by its SHA-256, the form registered clients' secrets are stored in, so that the
 * SDK's client authentication compares like with like and no secret is kept in the clear.
 */
export function hashPresentedClientSecret(req: { body?: unknown }, _res: unknown, next: () => void): void {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body.client_secret === 'string') body.client_secret = hashToken(body.client_secret);
  next();
}
