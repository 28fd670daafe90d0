/**
 * The landing page of an ios/android Expo update deployment at `/deployments/<id>/`: the app, the
 * Expo SDKs the deployment serves (one update each), an `exp://` QR code that any of those Expo
 * Gos opens (Expo Go names its SDK in each request), and how to get a matching Expo Go.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from '../../io/html-escape.js';
import { isLoopbackHostname } from '../../io/loopback-hosts.js';
import type { BuilderRouteSources } from '../builder-module.js';
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
<p>Manifest of this deployment (Expo Updates protocol v1): <code>${escapeHtml(manifestUrl)}</code>. A development build loads it when its <code>updates.url</code> is set to it; the project's owner finds the private URL that follows every deploy in the deploy's result message.</p>
</body></html>`;
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
  });
  res.end(req.method === 'HEAD' ? undefined : html);
  return true;
}
