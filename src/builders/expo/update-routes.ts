/**
 * Expo Updates (protocol v1, Expo's "Expo Updates v1" specification) for the `expo` builder's
 * native deployments, and the landing page of an ios/android deployment:
 *
 * | route | answers |
 * |---|---|
 * | `GET /updates/latest/<token>[/<channel>]` | the manifest of what the channel (default production; `expo-channel-name` names one on the bare URL) serves for `expo-platform` and the phone's `eas-client-id` (docs/releases.md); a browser gets the channel's page with its QR code (token: secret, per project) |
 * | `GET /updates/d/<deploymentId>` | the manifest of that deployment (or of its sibling for the other platform) |
 * | `GET /updates/assets/<deploymentId>/<path>` | an asset or the launch bundle; immutable, gzip/br when accepted |
 * | `GET /deployments/<id>/` (ios, android) | a landing page with an `exp://` QR code for Expo Go / a development build (update-landing.ts) |
 *
 * A deployment holds one update per Expo SDK the server serves; the manifest is that of the SDK
 * the client's `expo-runtime-version` names (`exposdk:<sdk>.0.0`, as Expo Go asks), or of the
 * first SDK for the app's own runtime version. The manifest is multipart/mixed or JSON by `accept`
 * negotiation (406 when nothing fits), with `expo-protocol-version: 1`, `expo-sfv-version: 0`,
 * `cache-control: private, max-age=0`. A bad platform or a missing runtime version is 400; no
 * such deployment is 404; a runtime version the deployment was not built for is 404 with a body
 * that names the SDKs it serves and how to get a matching Expo Go (`runtimeMismatch`). With `--updates-signing-key`, a request carrying
 * `expo-expect-signature` with keyid "main" gets an RSA-SHA256 `expo-signature`; any other keyid
 * (Expo Go asks for "expo-root") gets an unsigned manifest, never an error. Hashes were computed
 * at publish time (`expo-update.json`); absolute URLs are built here from the public URL.
 */
import { createHash, createPrivateKey, createSign, randomBytes, type KeyObject } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { constants as zlib, createBrotliCompress, createGzip } from 'node:zlib';
import type { BuilderRoutes, BuilderRouteSources, PublishedArtifactInfo } from '../builder-module.js';
import type { UpdateAsset, UpdateDescription } from './update-bundle.js';
import { CHANNEL_PATTERN, DEFAULT_CHANNEL } from '../../core/releases.js';
import { serveChannelLanding, serveUpdateLanding } from './update-landing.js';
import { readDeploymentUpdates, runtimeMismatch, updateForRuntime } from './update-sdks.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The keyid our signatures carry (Expo's convention for a project's own key). */
const SIGNING_KEY_ID = 'main';
const MANIFEST_TYPES = ['multipart/mixed', 'application/expo+json', 'application/json'] as const;
/** A plain `type/subtype` (RFC 9110 tokens): anything else a build wrote is sent as octet-stream. */
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

/** What the update routes read: published artifacts, the base URL of artifact links, and their settings. */
export interface ExpoUpdateSources extends BuilderRouteSources {
  /** `--updates-signing-key`, if any. */
  updatesSigningKeyFile?: string | undefined;
}

interface UpdatesState {
  app: ExpoUpdateSources;
  signingKey: KeyObject | null;
}

/**
 * The Expo update routes of a listener: `/updates/...` (table above) and the landing page of an
 * ios/android deployment. Reads the signing key (`--updates-signing-key`) once.
 * @throws Error when the signing key cannot be read.
 */
export function createExpoUpdateRoutes(app: ExpoUpdateSources): BuilderRoutes {
  const file = app.updatesSigningKeyFile;
  const state: UpdatesState = { app, signingKey: file ? loadUpdatesSigningKey(file) : null };
  return {
    routes: [{ path: '/updates/*', handle: (req, res, path, query) => serveExpoUpdates(state, req, res, path, query) }],
    landing: (req, res, path) => serveUpdateLanding(app, req, res, path),
  };
}

/**
 * Checks that the signing key can be read (at startup, so a bad key fails fast).
 * @throws Error naming the file.
 */
export function loadUpdatesSigningKey(file: string): KeyObject {
  try {
    return createPrivateKey(readFileSync(file));
  } catch (error) {
    throw new Error(`Cannot read the updates signing key ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

const PROTOCOL_HEADERS = {
  'expo-protocol-version': '1',
  'expo-sfv-version': '0',
  'cache-control': 'private, max-age=0',
};

async function serveExpoUpdates(
  state: UpdatesState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const { app } = state;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' });
    res.end();
    return;
  }
  const [, , section, id, ...rest] = path.split('/');
  if (section === 'assets' && id && UUID.test(id)) return serveAsset(app, req, res, id, rest);
  if (section !== 'latest' && section !== 'd') return sendJson(res, 404, { error: 'Not found' });
  const extra = rest.filter((segment) => segment !== '');
  // `/updates/latest/<token>/<channel>`: a channel's own URL (docs/releases.md "Channels").
  const pathChannel = section === 'latest' && extra.length === 1 ? extra[0]! : null;
  if (!id || (extra.length > 0 && (pathChannel === null || !CHANNEL_PATTERN.test(pathChannel))))
    return sendJson(res, 404, { error: 'Not found' });

  const platform = header(req, 'expo-platform') ?? query.get('platform');
  if (!platform && section === 'latest' && /\btext\/html\b/.test(header(req, 'accept') ?? '')) {
    // A browser: the channel's page with its QR code.
    if (await serveChannelLanding(app, req, res, { token: id, channel: pathChannel ?? DEFAULT_CHANNEL })) return;
    return sendJson(res, 404, { error: 'Not found' });
  }
  if (platform !== 'ios' && platform !== 'android') {
    return sendJson(res, 400, { error: 'expo-platform must be "ios" or "android"' }, PROTOCOL_HEADERS);
  }
  const runtimeVersion = header(req, 'expo-runtime-version') ?? query.get('runtime-version');
  if (!runtimeVersion) return sendJson(res, 400, { error: 'expo-runtime-version is required' }, PROTOCOL_HEADERS);

  const row =
    section === 'latest'
      ? await channelDeployment(app, req, { token: id, pathChannel, platform })
      : await pinnedDeployment(app, id, platform);
  const updates = row ? await readDeploymentUpdates(app, row) : null;
  if (!row || !updates || updates.updates.length === 0)
    return sendJson(res, 404, { error: `No ${platform} update here` }, PROTOCOL_HEADERS);
  const update = updateForRuntime(updates, runtimeVersion);
  if (!update) return sendJson(res, 404, runtimeMismatch(updates, runtimeVersion, platform), PROTOCOL_HEADERS);

  const type = negotiate(header(req, 'accept'));
  if (!type) return sendJson(res, 406, { error: `Accept one of ${MANIFEST_TYPES.join(', ')}` }, PROTOCOL_HEADERS);

  const manifest = buildManifest(app, row, update, runtimeVersion);
  const manifestText = JSON.stringify(manifest);
  const signature = signatureFor(req, state.signingKey, manifestText);

  if (type === 'multipart/mixed') {
    const boundary = `expo-${randomBytes(12).toString('hex')}`;
    const part = (name: string, body: string, extra: string[] = []) =>
      [
        `--${boundary}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Disposition: inline; name="${name}"`,
        ...extra,
        '',
        body,
      ].join('\r\n');
    const body = `${[part('manifest', manifestText, signature ? [`expo-signature: ${signature}`] : []), part('extensions', JSON.stringify({ assetRequestHeaders: {} }))].join('\r\n')}\r\n--${boundary}--\r\n`;
    res.writeHead(200, {
      ...PROTOCOL_HEADERS,
      'Content-Type': `multipart/mixed; boundary=${boundary}`,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  res.writeHead(200, {
    ...PROTOCOL_HEADERS,
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(manifestText),
    ...(signature && { 'expo-signature': signature }),
  });
  res.end(req.method === 'HEAD' ? undefined : manifestText);
}

/**
 * The deployment a phone gets from a channel's latest URL: the path's channel, else the one a
 * development build names (EAS Update's `expo-channel-name`), else production; by its
 * `eas-client-id` in a staged rollout (docs/releases.md "What a phone gets").
 */
async function channelDeployment(
  app: ExpoUpdateSources,
  req: IncomingMessage,
  { token, pathChannel, platform }: { token: string; pathChannel: string | null; platform: 'ios' | 'android' },
): Promise<PublishedArtifactInfo | undefined> {
  const projectId = await app.artifacts.projectOfUpdateChannel(token);
  if (!projectId) return undefined;
  const named = header(req, 'expo-channel-name');
  const channel = pathChannel ?? (named && CHANNEL_PATTERN.test(named) ? named : DEFAULT_CHANNEL);
  return app.artifacts.channelDeployment(projectId, channel, platform, header(req, 'eas-client-id'));
}

/** The deployment of a pinned URL (`/updates/d/<id>`): a deploy publishes ios and android together, so it serves the pair. */
async function pinnedDeployment(
  app: ExpoUpdateSources,
  id: string,
  platform: 'ios' | 'android',
): Promise<PublishedArtifactInfo | undefined> {
  const pinned = UUID.test(id) ? await app.artifacts.find(id) : undefined;
  if (pinned?.kind !== 'deployment') return undefined;
  return pinned.platform === platform ? pinned : app.artifacts.sibling(pinned, platform);
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/** The manifest type to answer for an `accept` header (q-values honoured), or null (406). A missing header accepts anything. */
export function negotiate(accept: string | null): (typeof MANIFEST_TYPES)[number] | null {
  if (!accept) return MANIFEST_TYPES[0];
  const ranges = accept.split(',').map((item) => {
    const [range, ...params] = item.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
    return { range: range!.trim(), q: q ? Number(q[1]) : 1 };
  });
  let best: { type: (typeof MANIFEST_TYPES)[number]; q: number } | null = null;
  for (const type of MANIFEST_TYPES) {
    const [major] = type.split('/');
    const exact =
      ranges.find((r) => r.range === type) ??
      ranges.find((r) => r.range === `${major}/*`) ??
      ranges.find((r) => r.range === '*/*');
    if (exact && exact.q > 0 && (!best || exact.q > best.q)) best = { type, q: exact.q };
  }
  return best?.type ?? null;
}

function buildManifest(
  app: ExpoUpdateSources,
  row: PublishedArtifactInfo,
  update: UpdateDescription,
  runtimeVersion: string,
): Record<string, unknown> {
  const base = app.artifactBaseUrl();
  const url = (asset: UpdateAsset) =>
    `${base}/updates/assets/${row.id}/${asset.path.split('/').map(encodeURIComponent).join('/')}`;
  const slug = typeof update.expoClient.slug === 'string' ? update.expoClient.slug : 'app';
  return {
    id: update.id,
    createdAt: update.createdAt,
    runtimeVersion,
    launchAsset: {
      hash: update.launchAsset.hash,
      key: update.launchAsset.key,
      contentType: update.launchAsset.contentType,
      url: url(update.launchAsset),
    },
    assets: update.assets.map((asset) => ({
      hash: asset.hash,
      key: asset.key,
      contentType: asset.contentType,
      fileExtension: asset.fileExtension,
      url: url(asset),
    })),
    metadata: {},
    extra: {
      expoClient: update.expoClient,
      // Expo Go needs a scope key; an anonymous one, distinct per project, is accepted.
      scopeKey: `@anonymous/${slug}-${createHash('sha256').update(row.projectId).digest('hex').slice(0, 12)}`,
      eas: {},
    },
  };
}

/** The `expo-signature` value for the manifest, or null (no key, not asked, or another keyid). */
function signatureFor(req: IncomingMessage, key: KeyObject | null, manifestText: string): string | null {
  const expect = header(req, 'expo-expect-signature');
  if (!key || !expect) return null;
  const keyid = /(?:^|[,\s])keyid="([^"]*)"/.exec(expect)?.[1] ?? SIGNING_KEY_ID;
  if (keyid !== SIGNING_KEY_ID) return null;
  const sig = createSign('RSA-SHA256').update(manifestText, 'utf8').sign(key, 'base64');
  return `sig="${sig}", keyid="${SIGNING_KEY_ID}", alg="rsa-v1_5-sha256"`;
}

async function serveAsset(
  app: ExpoUpdateSources,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  rest: string[],
): Promise<void> {
  const row = await app.artifacts.find(id);
  const updates = row ? await readDeploymentUpdates(app, row) : null;
  let wanted: string;
  try {
    wanted = rest.map((segment) => decodeURIComponent(segment)).join('/');
  } catch {
    return sendJson(res, 404, { error: 'Not found' });
  }
  // Only files the manifest names are served, and only from inside the deployment's folder (real
  // paths): the manifest description is written by the build, so its paths are never trusted.
  const asset = updates?.updates
    .flatMap((update) => [update.launchAsset, ...update.assets])
    .find((a) => a.path === wanted);
  const file = asset ? await app.artifacts.resolveFile(id, asset.path) : null;
  if (!asset || !file) return sendJson(res, 404, { error: 'Not found' });
  const accepted = header(req, 'accept-encoding') ?? '';
  const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null;
  res.writeHead(200, {
    'Content-Type': MEDIA_TYPE.test(asset.contentType) ? asset.contentType : 'application/octet-stream',
    'Cache-Control': 'public, max-age=31536000, immutable',
    'X-Content-Type-Options': 'nosniff',
    // Assets share the updates host: whatever a build names them, nothing in them runs there.
    'Content-Security-Policy': "default-src 'none'; sandbox",
    Vary: 'Accept-Encoding',
    ...(encoding && { 'Content-Encoding': encoding }),
  });
  if (req.method === 'HEAD') return void res.end();
  const source = createReadStream(file);
  if (encoding === 'br')
    await pipeline(source, createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } }), res);
  else if (encoding === 'gzip') await pipeline(source, createGzip({ level: 6 }), res);
  else await pipeline(source, res);
}
