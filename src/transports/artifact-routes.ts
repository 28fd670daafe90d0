/**
 * `GET /previews/<id>/<path>`, `GET /deployments/<id>/<path>` and `GET /exports/<id>/source.zip`
 * (docs/builders.md "Previews and deployments", "Checkpoints"): files of a published artifact, served only from inside the artifact's folder
 * (real paths), with content types. Artifact ids are random UUIDs, so a link works as a
 * capability: it is shown only to those who may read the project's session.
 * Pages are sandboxed (CSP `sandbox`) so a preview's scripts run in an opaque origin; on its
 * project's own origin (`<project-id>.localhost:<port>`) a page keeps that origin, so a preview may
 * use `localStorage` like the real app without sharing it with any other project.
 */
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ArtifactReader } from '../services/artifact-reader.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function notFound(res: ServerResponse): void {
  const body = JSON.stringify({ error: 'Not found' });
  res.writeHead(404, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** How one artifact request is served. */
export interface ArtifactServing {
  /** The page keeps its origin (CSP sandbox with `allow-same-origin`): only on its project's own origin. */
  ownOrigin: boolean;
  /** The project whose origin this is: another project's artifact is 404. */
  projectId?: string;
}

/** The artifact id of a `/previews/<id>/...` or `/deployments/<id>/...` path, or null. */
export function artifactIdOf(path: string): string | null {
  const id = path.split('/')[2];
  return id && UUID.test(id) ? id : null;
}

/** Serves one artifact file, or 404 for anything else (unknown id, wrong kind, another project's, traversal, folder without index). */
export async function serveArtifact(
  artifacts: ArtifactReader,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  serving: ArtifactServing,
): Promise<void> {
  const { ownOrigin } = serving;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' });
    res.end();
    return;
  }
  const [, section, id, ...rest] = path.split('/');
  const kind = section === 'previews' ? 'preview' : section === 'exports' ? 'export' : 'deployment';
  if (!id || !UUID.test(id)) return notFound(res);
  const row = await artifacts.find(id);
  if (!row || row.kind !== kind || row.externalUrl) return notFound(res);
  if (serving.projectId !== undefined && row.projectId !== serving.projectId) return notFound(res);
  if (rest.length === 0) {
    res.writeHead(308, { Location: `/${section}/${id}/` });
    res.end();
    return;
  }
  let subPath: string;
  try {
    subPath = rest.map((segment) => decodeURIComponent(segment)).join('/');
  } catch {
    return notFound(res);
  }
  if (subPath.includes('\0') || subPath.split(/[\\/]/).some((s) => s === '..')) return notFound(res);
  const file = await artifacts.resolveFile(id, subPath);
  if (!file) return notFound(res);
  // Loaded on first use: its database of types is not needed to start (docs/performance.md "Start-up time").
  const { contentType } = await import('mime-types');
  res.writeHead(200, {
    'Content-Type': contentType(file.slice(file.lastIndexOf('/') + 1)) || 'application/octet-stream',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': kind === 'preview' ? 'no-cache' : 'public, max-age=31536000, immutable',
    // An export is a download (the app's source), never a page.
    ...(kind === 'export' && { 'Content-Disposition': 'attachment' }),
    'Content-Security-Policy': `sandbox allow-scripts allow-forms allow-popups allow-modals${ownOrigin ? ' allow-same-origin' : ''}`,
    'Access-Control-Allow-Origin': '*',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const stream = createReadStream(file);
    stream.on('error', reject);
    stream.on('end', resolve);
    stream.pipe(res);
  });
}
