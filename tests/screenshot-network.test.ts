/**
 * The page a screenshot renders is a tenant's code, and it reaches no network but its own preview
 * server (docs/hosts.md "Screenshots"): it used to load anything the server's machine can reach (another
 * service on loopback, the intranet), and the picture handed back to the tenant shows it. Here the
 * page asks a canary server on loopback for an image and a frame, and draws itself only once both
 * have loaded or failed, so the picture is taken after every request was tried.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takePreviewScreenshot } from '../src/builders/preview-screenshot.js';
import { tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hits: string[] = [];
const canary = createServer((req, res) => {
  hits.push(req.url ?? '');
  res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
  res.end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
});

beforeAll(async () => {
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => canary.close(() => resolve()));
});

describe.runIf(existsSync(CHROMIUM))('a screenshot page', () => {
  it('loads its own files, and nothing from another server, loopback included', async () => {
    const { port } = canary.address() as AddressInfo;
    const dir = tempDir('mbm-shot-net-');
    mkdirSync(join(dir, 'static'), { recursive: true });
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><html><body style="margin:0;background:#fff"><div id="root"></div><script src="/static/app.js"></script></body></html>',
    );
    writeFileSync(
      join(dir, 'static', 'app.js'),
      `var left = 2; function done() { if (--left === 0) document.getElementById('root').innerHTML = '<div style="height:300px;background:rgb(0,0,200)"></div>'; }
       var img = new Image(); img.onload = done; img.onerror = done; img.src = 'http://127.0.0.1:${port}/image';
       fetch('http://localhost:${port}/fetch', { mode: 'no-cors' }).then(done, done);`,
    );
    const png = PNG.sync.read(await takePreviewScreenshot(CHROMIUM, dir));
    // Drawn by its own script (its own server works), after both requests were tried.
    expect([...png.data.subarray(4 * (50 * png.width + 50), 4 * (50 * png.width + 50) + 3)]).toEqual([0, 0, 200]);
    expect(hits).toEqual([]);
  });
});
