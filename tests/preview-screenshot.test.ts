/**
 * `svc_get_session` with `screenshot: true` (docs/hosts.md "Screenshots"): the latest web preview rendered
 * by headless Chromium in a phone-sized viewport, returned as an `image/png` item, taken once per
 * preview and cached beside it; the preview links as `resource_link` items; no browser -> no image
 * and a reason. The launch itself renders an Expo-style export (absolute `/_expo/...` script path,
 * drawn by script).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateBrowser } from '../src/builders/browser-location.js';
import { SCREENSHOT_VIEWPORT, takePreviewScreenshot } from '../src/builders/preview-screenshot.js';
import { detectBuildSandbox } from '../src/builders/process-sandbox.js';
import {
  createProject,
  httpClient,
  startTestServer,
  tempDir,
  toolResult,
  waitIdle,
  type TestServer,
} from './helpers.js';
import { stdioClient } from './stream-client.js';
import { rawSignIn } from './console/console-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);

/** Distinct colours in a PNG (a blank page has one or two). */
function colours(png: PNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4 * 7) seen.add(png.data.readUInt32BE(i));
  return seen.size;
}

describe.runIf(haveChromium)('the launch', () => {
  it('renders a script-drawn page whose assets use absolute /_expo/ paths, at phone width', async () => {
    const dir = tempDir('mbm-shot-site-');
    mkdirSync(join(dir, '_expo', 'static'), { recursive: true });
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><html><head><meta name="viewport" content="width=device-width"></head><body style="margin:0;background:#fff"><div id="root"></div><script src="/_expo/static/app.js"></script></body></html>',
    );
    // Drawn after a timer, as a React app renders after its bundle runs.
    writeFileSync(
      join(dir, '_expo', 'static', 'app.js'),
      "setTimeout(function(){document.getElementById('root').innerHTML='<div style=\"height:300px;background:rgb(200,0,0)\"></div>';},100);",
    );
    const png = PNG.sync.read(await takePreviewScreenshot(CHROMIUM, dir));
    expect(png.width).toBe(SCREENSHOT_VIEWPORT.width);
    expect(png.width).toBeGreaterThanOrEqual(320);
    expect(png.width).toBeLessThanOrEqual(430);
    const at = (x: number, y: number) => [...png.data.subarray(4 * (y * png.width + x), 4 * (y * png.width + x) + 3)];
    expect(at(50, 50)).toEqual([200, 0, 0]);
    expect(at(50, 600)).toEqual([255, 255, 255]);
  });
});

describe.runIf(haveChromium && detectBuildSandbox().kind === 'bubblewrap')('the launch in the build sandbox', () => {
  it("gives the page no network but its own origin: this machine's loopback servers never hear from it", async () => {
    const heard: string[] = [];
    // Readable from any origin, and marked: a page that reached it would know it did.
    const marker = `host-${Math.random().toString(16).slice(2)}`;
    const listener = createServer((req, res) => {
      heard.push(req.url ?? '');
      res.setHeader('access-control-allow-origin', '*');
      res.end(marker);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    try {
      const dir = tempDir('mbm-shot-net-');
      // Green when the server on the host's loopback answers, red when it cannot be reached.
      writeFileSync(
        join(dir, 'index.html'),
        `<!doctype html><html><body style="margin:0"><div id="r" style="height:300px;background:rgb(0,0,200)"></div><img src="http://127.0.0.1:${port}/beacon.png"><script>` +
          // Green only for this machine's server (its marker): the sandbox's own loopback may serve
          // the preview on the same port number, and that answer must not count as reaching the host.
          `fetch('http://127.0.0.1:${port}/fetch').then(function(r){return r.text()}).then(function(t){document.getElementById('r').style.background=t==='${marker}'?'rgb(0,200,0)':'rgb(200,0,0)'},function(){document.getElementById('r').style.background='rgb(200,0,0)'});` +
          `</script></body></html>`,
      );
      const png = PNG.sync.read(await takePreviewScreenshot(CHROMIUM, dir));
      expect([...png.data.subarray(4 * (50 * png.width + 50), 4 * (50 * png.width + 50) + 3)]).toEqual([200, 0, 0]);
      expect(heard).toEqual([]);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});

describe('where the browser comes from', () => {
  it('--browser naming no file means no browser, with no fallback', () => {
    expect(locateBrowser('/nonexistent/chrome')).toEqual({ path: null, problem: expect.stringContaining('--browser') });
  });
  it('otherwise Debian chromium, else one on PATH, else none', () => {
    if (haveChromium) expect(locateBrowser(undefined).path).toBe(CHROMIUM);
    const none = tempDir('mbm-nopath-');
    if (!haveChromium) expect(locateBrowser(undefined, none).path).toBeNull();
  });
});

describe.runIf(haveChromium)('svc_get_session with screenshot: true', () => {
  let server: TestServer;
  let token: string;
  let http: Client;
  let stdio: Client;
  let stdioDone: Promise<void>;
  let projectId: string;

  beforeAll(async () => {
    server = await startTestServer({ browser: CHROMIUM });
    token = server.token('alice');
    http = await httpClient(server.mcpUrl, token);
    ({ client: stdio, done: stdioDone } = await stdioClient(server.app, token));
    projectId = (await createProject(server.mcpUrl, token, { name: 'Screenshot app', description: 'A to-do list' })).id;
  });
  afterAll(async () => {
    await http.close();
    await stdio.close();
    await stdioDone;
    await server.close();
  });

  it('before any build: no image, and the reason', async () => {
    const result = await http.callTool({ name: 'svc_get_session', arguments: { projectId, screenshot: true } });
    expect((result.content as any[]).some((c) => c.type === 'image')).toBe(false);
    expect((result.structuredContent as any).screenshot).toEqual({
      status: 'unavailable',
      reason: expect.stringContaining('no web preview'),
    });
  });

  it('after a build: a PNG of phone width showing the app, over HTTP and stdio, taken once and cached beside the preview', async () => {
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId,
      message: 'Build a to-do list',
      kind: 'build',
    });
    const session = await waitIdle(server.mcpUrl, token, projectId);
    const preview = session.previewUrls.find((p: any) => p.platform === 'web');
    const images: Buffer[] = [];
    for (const client of [http, stdio]) {
      const result = await client.callTool({ name: 'svc_get_session', arguments: { projectId, screenshot: true } });
      const content = result.content as any[];
      expect(content[0].type).toBe('text');
      expect(content).toContainEqual({
        type: 'resource_link',
        uri: preview.url,
        name: 'web-preview',
        title: 'Web preview',
        mimeType: 'text/html',
      });
      const image = content.find((c) => c.type === 'image');
      expect(image.mimeType).toBe('image/png');
      expect((result.structuredContent as any).screenshot).toEqual({
        status: 'taken',
        previewUrl: preview.url,
        width: 390,
        height: 844,
      });
      const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
      expect(png.width).toBe(390);
      expect(png.height).toBe(844);
      // The scripted preview draws a phone frame with text: far from a blank page.
      expect(colours(png)).toBeGreaterThan(10);
      images.push(Buffer.from(image.data, 'base64'));
    }
    expect(images[1]!.equals(images[0]!)).toBe(true);
    const artifactId = /\/previews\/([0-9a-f-]{36})\//.exec(preview.url)![1]!;
    const cached = server.app.artifactStore.screenshotFileOf(artifactId);
    expect(readFileSync(cached).equals(images[0]!)).toBe(true);
    // Cached beside the folder, never inside it: not served as one of the preview's files.
    expect(existsSync(join(await server.app.artifactStore.localDir(artifactId), 'screenshot.png'))).toBe(false);
  });

  it('the console shows the same picture as the project thumbnail', async () => {
    const session = await rawSignIn(server.http.url, token);
    const page = await (
      await fetch(`${server.http.url}/projects/${projectId}`, { headers: { Cookie: session.cookie } })
    ).text();
    const src = /<img id="preview-thumbnail"[^>]* src="([^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&');
    expect(src).toMatch(new RegExp(`^/projects/${projectId}/thumbnail\\.png`));
    const res = await fetch(`${server.http.url}${src}`, { headers: { Cookie: session.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const picture = Buffer.from(await res.arrayBuffer());
    const result = await http.callTool({ name: 'svc_get_session', arguments: { projectId, screenshot: true } });
    expect(picture.equals(Buffer.from((result.content as any[]).find((c) => c.type === 'image').data, 'base64'))).toBe(
      true,
    );
  });
});

describe('with no browser', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ browser: '/nonexistent/chromium' });
    token = server.token('alice');
  });
  afterAll(() => server.close());

  it('the server starts, the call answers without an image, and screenshot.reason says why', async () => {
    const projectId = (await createProject(server.mcpUrl, token)).id;
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message: 'Build it', kind: 'build' });
    await waitIdle(server.mcpUrl, token, projectId);
    const client = await httpClient(server.mcpUrl, token);
    try {
      const result = await client.callTool({ name: 'svc_get_session', arguments: { projectId, screenshot: true } });
      const content = result.content as any[];
      expect(content.some((c) => c.type === 'image')).toBe(false);
      expect(content.filter((c) => c.type === 'resource_link')).toHaveLength(1);
      expect((result.structuredContent as any).screenshot).toMatchObject({
        status: 'unavailable',
        reason: expect.stringContaining('--browser'),
      });
    } finally {
      await client.close();
    }
  });
});
