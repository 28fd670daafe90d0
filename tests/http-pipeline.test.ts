/**
 * The declared HTTP pipeline (`src/transports/http-pipeline.ts`, docs/architecture.md "The HTTP
 * pipeline"): guards run in their declared order before the handler, a guard that answers ends
 * the request, and the table docs/architecture.md shows is the one the server mounts.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpRoutes } from '../src/transports/http-pipeline.js';
import { guard } from '../src/io/route-guard.js';
import { rawHttp, ROOT, startTestServer } from './helpers.js';

/** A guard that records its name in the `X-Trace` response header, and refuses with 403 when the request names it in `X-Refuse`. */
const traced = (name: string, later = false) =>
  guard(name, (req, res) => {
    res.appendHeader('X-Trace', name);
    const pass = req.headers['x-refuse'] !== name;
    if (!pass) {
      res.writeHead(403);
      res.end(`refused by ${name}`);
    }
    return later ? new Promise<boolean>((resolve) => setImmediate(() => resolve(pass))) : pass;
  });

const answer = (text: string) => (_req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => {
  res.end(`${text} ${path} ${query.get('q') ?? ''}`);
};

describe('HttpRoutes', () => {
  let server: Server;
  let base: string;
  const routes = new HttpRoutes()
    .post('/items', traced('first'), traced('slow', true), traced('last'), answer('created'))
    .get('/items', traced('first'), answer('listed'))
    .all('/files/*', traced('files'), answer('file'));

  beforeAll(async () => {
    server = createServer((req, res) => {
      const [path = '/', query = ''] = (req.url ?? '/').split('?');
      const work = routes.dispatch(req, res, path, new URLSearchParams(query));
      if (work === false) {
        res.writeHead(404);
        res.end('none');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('runs the guards in their declared order, synchronous or not, then the handler', async () => {
    const res = await rawHttp(`${base}/items?q=1`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('created /items 1');
    expect(res.headers['x-trace']).toBe('first, slow, last');
  });

  it('a guard that answers ends the request: no later guard, no handler', async () => {
    for (const [refuser, trace] of [
      ['first', 'first'],
      ['slow', 'first, slow'],
      ['last', 'first, slow, last'],
    ]) {
      const res = await rawHttp(`${base}/items`, { method: 'POST', headers: { 'X-Refuse': refuser! } });
      expect(res.status).toBe(403);
      expect(res.text).toBe(`refused by ${refuser}`);
      expect(res.headers['x-trace']).toBe(trace);
    }
  });

  it('matches the method (GET takes HEAD) and exact paths before prefixes; nothing else matches', async () => {
    expect((await rawHttp(`${base}/items`)).text).toBe('listed /items ');
    expect((await rawHttp(`${base}/items`, { method: 'HEAD' })).status).toBe(200);
    expect((await rawHttp(`${base}/items`, { method: 'PUT' })).status).toBe(404);
    expect((await rawHttp(`${base}/files/a/b`, { method: 'DELETE' })).text).toBe('file /files/a/b ');
    expect((await rawHttp(`${base}/filesystem`)).status).toBe(404);
    expect(routes.describe()).toEqual([
      { method: 'POST', path: '/items', guards: ['first', 'slow', 'last'] },
      { method: 'GET', path: '/items', guards: ['first'] },
      { method: '*', path: '/files/*', guards: ['files'] },
    ]);
  });
});

describe('the mounted table', () => {
  it('is the one docs/architecture.md shows', async () => {
    const server = await startTestServer({ builder: 'scripted', metrics: {} });
    try {
      const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
      const section = doc.slice(doc.indexOf('## The HTTP pipeline'));
      const rows = [...section.matchAll(/^\| (POST|GET|\*) \| `([^`]+)` \| ([^|]*)\|$/gm)].map(
        ([, method, path, guards]) => ({
          method,
          path,
          guards: guards!.trim() === '' ? [] : guards!.trim().split(', '),
        }),
      );
      expect(rows).toEqual(server.http.routes);
    } finally {
      await server.close();
    }
  });
});
