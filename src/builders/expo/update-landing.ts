/**
 * The landing page of an ios/android Expo update deployment at `/deployments/<id>/`: the app, the
 * Expo SDKs the deployment serves (one update each), an `exp://` QR code that any of those Expo
 * Gos opens (Expo Go names its SDK in each request), how to get a matching Expo Go, and the
 * deploy's channel and changes since the channel's previous deploy, with their diff
 * (docs/releases.md "Changes"). And the page of a channel's latest update URL, with its QR code.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from '../../io/html-escape.js';
import { isLoopbackHostname } from '../../io/loopback-hosts.js';
import { latestUpdatePathOf } from '../../core/releases.js';
import type { BuilderRouteSources, PublishedArtifactInfo } from '../builder-module.js';
import { GET_EXPO_GO, readDeploymentUpdates, servedSdks } from './update-sdks.js';

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}code{background:#f2f4f7;padding:.1rem .3rem;border-radius:4px;word-break:break-all}.qr{width:280px;height:280px}.warn{background:#fff4e5;padding:.75rem;border-radius:6px}';

/**
 * Answers `GET /deployments/<id>/` of an ios/android update deployment.
 * @returns false when `path` is not such a page (the artifact routes answer it instead).
 */
export async function serveUpdateLanding(
  app: BuilderRouteSources,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  const match = /^\/deployments\/([0-9a-f-]{36})\/(index\.html)?$/.exec(path);
  if (!match || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const row = await app.artifacts.find(match[1]!);
  const updates = row ? await readDeploymentUpdates(app, row) : null;
  const first = updates?.updates[0];
  if (!row || !updates || !first) return false;
  const base = new URL(app.artifactBaseUrl());
  const root = `${base.origin}${base.pathname.replace(/\/$/, '')}`;
  const manifestUrl = `${root}/updates/d/${row.id}`;
  const expUrl = manifestUrl.replace(/^http:/, 'exp:').replace(/^https:/, 'exps:');
  // Loaded on the first landing page: a stdio start never evaluates the QR encoder.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(expUrl, { type: 'svg', margin: 2, width: 280, errorCorrectionLevel: 'M' });
  const name = typeof first.expoClient.name === 'string' ? first.expoClient.name : 'App';
  const platform = row.platform === 'ios' ? 'ios' : 'android';
  const sdks = servedSdks(updates);
  const sdkList = escapeHtml(sdks.join(' and '));
  const failed = updates.failed
    .map((f) => `<li>SDK ${escapeHtml(String(f.sdk))}: not served (its export failed: ${escapeHtml(f.reason)})</li>`)
    .join('');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(name)} · deploy #${row.number} · ${row.platform}</title>
<style>${STYLE}</style>
</head><body>
<h1>${escapeHtml(name)}</h1>
<p>Deploy #${row.number}, ${platform === 'ios' ? 'iOS' : 'Android'}: Expo updates (Hermes bytecode), published ${escapeHtml(first.createdAt)}.</p>
<p id="sdks">Serves Expo SDK <strong>${sdkList}</strong>: one update per SDK; Expo Go gets the one of the SDK it runs.</p>
${failed ? `<ul id="failed-sdks">${failed}</ul>` : ''}
<div class="qr" id="qr" role="img" aria-label="QR code of ${escapeHtml(expUrl)}">${svg}</div>
<p>Scan with the camera (Expo Go for SDK ${sdkList} installed) or open <code id="exp-url">${escapeHtml(expUrl)}</code>.</p>
${isLoopbackHostname(base.hostname) ? '<p class="warn">This server\'s public URL is a loopback address, which a phone cannot reach. Start the server with <code>--public-url http://&lt;LAN address or domain&gt;:&lt;port&gt;</code>.</p>' : ''}
<p id="get-expo-go">${escapeHtml(GET_EXPO_GO.android)}<br>${escapeHtml(GET_EXPO_GO.ios)}</p>
${await changesSection(app, row)}
<p>Manifest of this deployment (Expo Updates protocol v1): <code>${escapeHtml(manifestUrl)}</code>. A development build loads it when its <code>updates.url</code> is set to it; the project's owner finds the private URL that follows every deploy in the deploy's result message.</p>
</body></html>`;
  sendPage(req, res, html);
  return true;
}

function sendPage(req: IncomingMessage, res: ServerResponse, html: string): void {
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}

/** The page's "Changes" section: the deploy's channel and the diff since the channel's previous deploy. */
async function changesSection(app: BuilderRouteSources, row: PublishedArtifactInfo): Promise<string> {
  const release = await app.artifacts.releaseOf(row);
  if (!release) return '';
  const head = `<p id="channel">Channel <strong>${escapeHtml(release.channel)}</strong>, rolled out to ${release.rolloutPercent} % of its phones.</p>`;
  if (release.previousNumber === null)
    return `${head}<p id="changes">The first deploy of this channel: nothing to compare with.</p>`;
  const list = release.changes
    .map((c) => `<li><code>${escapeHtml(c.path)}</code> +${c.added} −${c.removed}</li>`)
    .join('');
  return `${head}<h2>Changes since deploy #${release.previousNumber}</h2>
<ul id="changes">${list || '<li>No source file changed.</li>'}</ul>
${release.patch ? `<pre id="diff">${escapeHtml(release.patch)}</pre>` : ''}`;
}

/**
 * Answers a browser's `GET /updates/latest/<token>[/<channel>]`: the channel's page, with the
 * `exp://` QR code of its latest update URL (docs/releases.md "Channels").
 * @returns false for an unknown token (the route answers 404).
 */
export async function serveChannelLanding(
  app: BuilderRouteSources,
  req: IncomingMessage,
  res: ServerResponse,
  { token, channel }: { token: string; channel: string },
): Promise<boolean> {
  if (!(await app.artifacts.projectOfUpdateChannel(token))) return false;
  const base = new URL(app.artifactBaseUrl());
  const root = `${base.origin}${base.pathname.replace(/\/$/, '')}`;
  const url = `${root}${latestUpdatePathOf(token, channel)}`;
  const expUrl = url.replace(/^http:/, 'exp:').replace(/^https:/, 'exps:');
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(expUrl, { type: 'svg', margin: 2, width: 280, errorCorrectionLevel: 'M' });
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Channel ${escapeHtml(channel)}</title>
<style>${STYLE}</style>
</head><body>
<h1>Channel ${escapeHtml(channel)}</h1>
<p>This private URL follows every deploy of channel <strong>${escapeHtml(channel)}</strong>: a phone that opens it gets what the channel serves (a staged rollout by its eas-client-id), from its next check for updates on.</p>
<div class="qr" id="qr" role="img" aria-label="QR code of the channel's latest update URL">${svg}</div>
<p>Scan with the camera (Expo Go) or open <code id="exp-url">${escapeHtml(expUrl)}</code>.</p>
<p id="get-expo-go">${escapeHtml(GET_EXPO_GO.android)}<br>${escapeHtml(GET_EXPO_GO.ios)}</p>
</body></html>`;
  sendPage(req, res, html);
  return true;
}
