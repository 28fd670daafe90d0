/**
 * The console's static files (`assets/console/` in the package: one script, one stylesheet, the
 * icon as SVG and as `/favicon.ico`), committed as they are served: nothing is built on the
 * user's machine.
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';

/** `assets/console/` of the package, both from `src/console/` and from `dist/console/`. */
const ASSETS = new URL('../../assets/console/', import.meta.url);

/** Served path -> [file in `assets/console/`, Content-Type]. */
const FILES: Record<string, [string, string]> = {
  '/console/console.js': ['console.js', 'text/javascript; charset=utf-8'],
  '/console/console.css': ['console.css', 'text/css; charset=utf-8'],
  '/console/favicon.svg': ['favicon.svg', 'image/svg+xml'],
  // Browsers and feed readers ask for it at the root whatever the page names.
  '/favicon.ico': ['favicon.ico', 'image/x-icon'],
};

const cache = new Map<string, Buffer>();

/** Serves a static file of the console; false when `path` names none. */
export async function serveStatic(res: ServerResponse, path: string, head: boolean): Promise<boolean> {
  const entry = FILES[path];
  if (!entry) return false;
  const [name, type] = entry;
  let body = cache.get(path);
  if (!body) {
    body = await readFile(new URL(name, ASSETS));
    cache.set(path, body);
  }
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': String(body.length),
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(head ? undefined : body);
  return true;
}
