/**
 * The MCP Apps session card (docs/contract.md#app-card, README "The app card (MCP Apps)"): offered only to a
 * client that declares `io.modelcontextprotocol/ui`, and played in the harness of
 * `card-host.js`: the extension's AppBridge in headless Chromium, the card in a sandboxed
 * iframe, its tool calls sent by a real SDK client to the real server over HTTP. The card
 * renders, shows the latest screenshot and a deployment's QR code, and its Cancel button cancels
 * a running workflow. A screenshot the server was busy with is asked again (the card's clock moved
 * by the test); one whose render failed is shown as such and not asked again.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../../src/builders/process-sandbox.js';
import { CARD_QR_META_KEY, qrSvg } from '../../src/mcp/card-qr.js';
import { SCREENSHOT_LONGEST_MS } from '../../src/services/preview-screenshots.js';
import { launchChromium } from '../chromium.js';
import { cliToken } from '../bin-helpers.js';
import {
  BIN,
  httpClient,
  post,
  ROOT,
  startTestServer,
  tempDir,
  toolResult,
  waitFor as waitUntil,
  type TestServer,
} from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const MODERN = '2026-07-28';
const CARD_URI = 'ui://mobile-builder/session-card.html';

/** A 2026-07-28 client, declaring the extension when `apps`. */
async function modernClient(server: TestServer, token: string, apps: boolean): Promise<ClientV2> {
  const capabilities = apps ? { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
  const client = new ClientV2(
    { name: apps ? 'apps-host' : 'plain-host', version: '1' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(
    new HttpTransportV2(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

type Session = {
  hasActiveWorkflows: boolean;
  activeWorkflow: { status: string } | null;
  lastWorkflow: { status: string } | null;
  pendingQuestion: { questionId: string } | null;
};

/** Follows the project with waits until `done` holds (no sleeps: each call returns on a change). */
async function waitFor(
  client: ClientV1 | ClientV2,
  projectId: string,
  done: (s: Session) => boolean,
): Promise<Session> {
  for (let waitSeconds = 0; ; waitSeconds = 30) {
    const result = await client.callTool({ name: 'svc_get_session', arguments: { projectId, waitSeconds } });
    const session = result.structuredContent as Session;
    if (done(session)) return session;
  }
}

let dataDir: string;
let server: TestServer;
let token: string;
let projectId: string;
let cardBytes: number;

beforeAll(async () => {
  // The card as `npm run build` makes it. Asynchronously: its esbuild passes take a minute on a busy
  // machine, and a worker blocked that long fails the run with vitest's "Timeout calling onTaskUpdate".
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build-card.mjs')]);
  cardBytes = statSync(join(ROOT, 'dist/session-card.html')).size;
  dataDir = tempDir('mbm-card-');
  // A first server with quick steps: a build (the preview the card's screenshot shows) and a deploy.
  const quick = await startTestServer({ dataDir, browser: CHROMIUM });
  token = quick.token('carol');
  const v1 = await httpClient(quick.mcpUrl, token);
  projectId = (
    (await v1.callTool({ name: 'svc_create_project', arguments: { name: 'Tip Calculator' } })).structuredContent as {
      id: string;
    }
  ).id;
  await v1.callTool({
    name: 'svc_send_message',
    arguments: { projectId, kind: 'build', message: 'A tip calculator with a bill field and 10/15/20% buttons' },
  });
  await waitFor(v1, projectId, (s) => !s.hasActiveWorkflows);
  await v1.callTool({ name: 'svc_send_message', arguments: { projectId, kind: 'deploy', message: 'Deploy it' } });
  const asked = await waitFor(v1, projectId, (s) => s.pendingQuestion !== null || !s.hasActiveWorkflows);
  if (asked.pendingQuestion)
    await v1.callTool({
      name: 'svc_send_message',
      arguments: { projectId, questionId: asked.pendingQuestion.questionId, message: 'com.example.tips' },
    });
  await waitFor(v1, projectId, (s) => !s.hasActiveWorkflows);
  await v1.close();
  await quick.http.close();
  await quick.app.close();
  // The same data with steps that never end by themselves: a running workflow to cancel.
  server = await startTestServer({ dataDir, browser: CHROMIUM, scriptedStepMs: 1_000_000 });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/**
 * The card's bytes (README "The app card (MCP Apps)"): under 100 KB. The extension's App bridge, the SDK's
 * Protocol and zod under it are trimmed by scripts/build-card.mjs to what the card's code reaches (what the
 * bridge and the Protocol never call, the schemas of methods the card never sends or handles, zod's unused
 * methods and formats); a dependency or a card change that grows it past 100,000 bytes fails here.
 */
const CARD_CEILING_BYTES = 100_000;

/**
 * The URLs written in the card, none of them fetched: the JSON Schema dialect names the SDK
 * compares a `$schema` to, and zod's IPv6 check, which parses an address as `http://[address]`
 * (`${...}` stands for any template expression). Its QR codes come drawn by the server.
 */
const CARD_URLS = [
  'http://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'http://[${}]',
];

describe('the card file (dist/session-card.html, as npm run build makes it)', () => {
  it(`stays under its ceiling of ${CARD_CEILING_BYTES} bytes`, () => {
    expect(cardBytes).toBeGreaterThan(0);
    expect(cardBytes).toBeLessThan(CARD_CEILING_BYTES);
  });

  it('uses no network but the host: no network API, no loaded resource, no URL but the accepted ones', () => {
    const html = readFileSync(join(ROOT, 'dist/session-card.html'), 'utf8');
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    // The markup and its styles load nothing: no src/href/srcset/action, no CSS url() or @import.
    const markup = html.replace(/<script>[\s\S]*?<\/script>/g, '');
    expect(markup.match(/\b(src|href|srcset|action)\s*=|url\(|@import/gi) ?? []).toEqual([]);
    // The script names no network API (globals keep their names through minification).
    expect(
      scripts[0]!.match(
        /\b(fetch|XMLHttpRequest|WebSocket|EventSource|sendBeacon|importScripts|Worker|SharedWorker)\b/g,
      ) ?? [],
    ).toEqual([]);
    const urls = new Set(
      (html.match(/https?:\/\/[^"'`\s<>)\\]*/g) ?? []).map((url) => url.replace(/\$\{[^}]*\}/g, '${}')),
    );
    expect([...urls].filter((url) => !CARD_URLS.includes(url))).toEqual([]);
  });
});

describe('the card is offered only to a host that declares the extension', () => {
  it('a host with the extension: svc_get_session names the ui:// resource, which is the card (HTML of the extension, CSP declared)', async () => {
    const client = await modernClient(server, token, true);
    try {
      expect(client.getDiscoverResult()!.capabilities).toMatchObject({
        tools: { listChanged: false },
        resources: {},
        extensions: { [EXTENSION_ID]: {} },
      });
      const { tools } = await client.listTools();
      const withMeta = tools.filter((t) => t._meta !== undefined);
      expect(withMeta.map((t) => t.name)).toEqual(['svc_get_session']);
      expect(withMeta[0]!._meta).toEqual({ ui: { resourceUri: CARD_URI }, 'ui/resourceUri': CARD_URI });
      const { resources } = await client.listResources();
      expect(resources).toEqual([expect.objectContaining({ uri: CARD_URI, mimeType: RESOURCE_MIME_TYPE })]);
      const read = await client.readResource({ uri: CARD_URI });
      const content = read.contents[0] as { uri: string; mimeType: string; text: string; _meta: unknown };
      expect(content).toMatchObject({
        uri: CARD_URI,
        mimeType: RESOURCE_MIME_TYPE,
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] } } },
      });
      expect(content.text).toMatch(/^<!doctype html>/);
      expect(Buffer.byteLength(content.text)).toBe(cardBytes);
    } finally {
      await client.close();
    }
  });

  it('hosts without it (2025-11-25, and 2026-07-28 without the capability) get exactly what they got before: no _meta, no resources', async () => {
    const v1 = await httpClient(server.mcpUrl, token);
    const plain = await modernClient(server, token, false);
    const apps = await modernClient(server, token, true);
    try {
      const [old, modern, card] = await Promise.all([v1.listTools(), plain.listTools(), apps.listTools()]);
      expect(old.tools.every((t) => t._meta === undefined)).toBe(true);
      expect(modern.tools).toEqual(old.tools);
      // The host with the extension gets the same list but for the card's _meta.
      expect(card.tools.map(({ _meta, ...t }) => t)).toEqual(old.tools);
      expect(plain.getDiscoverResult()!.capabilities).toEqual({ tools: { listChanged: false } });
      expect(v1.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
      // The SDK client does not ask a server without `resources`; asked anyway, the server refuses.
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const raw = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: envelope } },
        token,
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/list' },
      );
      expect(raw.json.error).toMatchObject({ code: -32601, message: 'Method not found: resources/list' });
      await expect(v1.listResources()).rejects.toThrow('Method not found: resources/list');
      // Tool results are the same for every host, but for the deployments' QR codes a host with the
      // extension gets in `_meta` for the card (src/mcp/card-qr.ts).
      const args = { name: 'svc_get_session', arguments: { projectId } };
      const [a, b, c] = [await v1.callTool(args), await apps.callTool(args), await plain.callTool(args)];
      expect({ content: b.content, structuredContent: b.structuredContent }).toEqual({
        content: a.content,
        structuredContent: a.structuredContent,
      });
      expect({ content: c.content, structuredContent: c.structuredContent }).toEqual({
        content: a.content,
        structuredContent: a.structuredContent,
      });
      expect(a).not.toHaveProperty('_meta');
      expect(Object.keys(c._meta ?? {})).not.toContain(CARD_QR_META_KEY);
      const deployments = (a.structuredContent as { previewUrls: Array<{ kind: string; url: string }> }).previewUrls
        .filter((p) => p.kind === 'deployment')
        .map((p) => p.url);
      expect(deployments.length).toBeGreaterThan(0);
      const codes = b._meta?.[CARD_QR_META_KEY] as Record<string, string>;
      expect(Object.keys(codes).sort()).toEqual([...deployments].sort());
      for (const url of deployments) expect(codes[url]).toBe(await qrSvg(url, 120));
    } finally {
      await Promise.all([v1.close(), plain.close(), apps.close()]);
    }
  });
});

describe('over stdio in the 2025-11-25 era, the connection is one client: its initialize decides', () => {
  /** A v1 client of the built bin over stdio, declaring the extension when `apps`. */
  async function stdioClient(dir: string, apps: boolean): Promise<ClientV1> {
    const capabilities = apps ? { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
    const client = new ClientV1({ name: 'stdio-host', version: '1' }, { capabilities });
    const env = { ...(process.env as Record<string, string>), SVC_API_TOKEN: cliToken(dir, 'dave') };
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--data-dir', dir, '--builder', 'scripted', '--scripted-step-ms', '20', '--port', '0'],
        env,
        stderr: 'ignore',
      }),
    );
    return client;
  }

  it('a host that declares the extension gets the card; one that does not gets what it got before', async () => {
    const dir = tempDir('mbm-card-stdio-');
    const [apps, plain] = [await stdioClient(dir, true), await stdioClient(dir, false)];
    try {
      expect(apps.getServerCapabilities()).toEqual({
        tools: { listChanged: false },
        resources: {},
        extensions: { [EXTENSION_ID]: {} },
      });
      expect(plain.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
      const [card, old] = [await apps.listTools(), await plain.listTools()];
      expect(card.tools.find((t) => t.name === 'svc_get_session')!._meta).toEqual({
        ui: { resourceUri: CARD_URI },
        'ui/resourceUri': CARD_URI,
      });
      expect(card.tools.map(({ _meta, ...t }) => t)).toEqual(old.tools);
      expect(old.tools.every((t) => t._meta === undefined)).toBe(true);
      expect((await apps.listResources()).resources).toEqual([
        expect.objectContaining({ uri: CARD_URI, mimeType: RESOURCE_MIME_TYPE }),
      ]);
      const read = (await apps.readResource({ uri: CARD_URI })).contents[0] as { mimeType: string; text: string };
      expect(read.mimeType).toBe(RESOURCE_MIME_TYPE);
      expect(Buffer.byteLength(read.text)).toBe(cardBytes);
      await expect(plain.listResources()).rejects.toThrow('Method not found: resources/list');
      // A deployment's QR code comes in the result's _meta for the host with the extension alone.
      const created = await apps.callTool({ name: 'svc_create_project', arguments: { name: 'Over stdio' } });
      const id = (created.structuredContent as { id: string }).id;
      await apps.callTool({
        name: 'svc_send_message',
        arguments: { projectId: id, kind: 'deploy', message: 'Deploy' },
      });
      const asked = await waitFor(apps, id, (s) => s.pendingQuestion !== null || !s.hasActiveWorkflows);
      if (asked.pendingQuestion)
        await apps.callTool({
          name: 'svc_send_message',
          arguments: { projectId: id, questionId: asked.pendingQuestion.questionId, message: 'com.example.stdio' },
        });
      await waitFor(apps, id, (s) => !s.hasActiveWorkflows);
      const args = { name: 'svc_get_session', arguments: { projectId: id } };
      const [withCodes, without] = [await apps.callTool(args), await plain.callTool(args)];
      // (Each process serves its previews on its own port: the URLs differ, not the shape.)
      expect(without).not.toHaveProperty('_meta');
      const { previewUrls } = withCodes.structuredContent as { previewUrls: Array<{ kind: string; url: string }> };
      const deployment = previewUrls.find((p) => p.kind === 'deployment')!.url;
      expect(withCodes._meta).toEqual({ [CARD_QR_META_KEY]: { [deployment]: await qrSvg(deployment, 120) } });
    } finally {
      await Promise.all([apps.close(), plain.close()]);
    }
  });
});

describe.runIf(existsSync(CHROMIUM))('the card in a host (the extension AppBridge in headless Chromium)', () => {
  let browser: Browser | null;
  let page: Server;

  beforeAll(async () => {
    browser = await launchChromium();
    const script = (
      await build({
        entryPoints: [join(ROOT, 'tests/card/card-host.js')],
        bundle: true,
        format: 'iife',
        platform: 'browser',
        write: false,
        logLevel: 'warning',
      })
    ).outputFiles[0]!.text;
    page = createServer((req, res) => {
      if (req.url === '/host.js') return void res.setHeader('content-type', 'text/javascript').end(script);
      res
        .setHeader('content-type', 'text/html')
        .end(
          '<!doctype html><html><body style="margin:16px;background:#f6f8fa;font-family:system-ui"><script src="/host.js"></script></body></html>',
        );
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  /** A harness tab whose host forwards the card's tool calls to `client`. */
  async function hostTab(client: ClientV2): Promise<Page> {
    const tab = await browser!.newPage({ viewport: { width: 460, height: 900 } });
    await tab.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) =>
      client.callTool(params),
    );
    await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
    return tab;
  }

  /** Opens the card in `tab` as the host does after a svc_get_session call of `projectId`. */
  async function openCard(tab: Page, client: ClientV2, projectId: string): Promise<FrameLocator> {
    const html = ((await client.readResource({ uri: CARD_URI })).contents[0] as { text: string }).text;
    const input = { projectId };
    const result = await client.callTool({ name: 'svc_get_session', arguments: input });
    await tab.evaluate(
      ([h, i, r]) => (globalThis as unknown as { openCard(...a: unknown[]): Promise<void> }).openCard(h, i, r),
      [html, input, result] as const,
    );
    return tab.frameLocator('#card');
  }

  it("answers the pending question from the card, and shows the deployment's QR code when the deploy ends", async (ctx) => {
    if (!browser) return ctx.skip();
    const quick = await startTestServer();
    const own = quick.token('erin');
    const client = await modernClient(quick, own, true);
    const tab = await hostTab(client);
    try {
      const id = (
        (await client.callTool({ name: 'svc_create_project', arguments: { name: 'Asked' } })).structuredContent as {
          id: string;
        }
      ).id;
      await client.callTool({
        name: 'svc_send_message',
        arguments: { projectId: id, kind: 'deploy', message: 'Deploy it' },
      });
      await waitFor(client, id, (s) => s.pendingQuestion !== null);
      const card = await openCard(tab, client, id);
      await card.locator('#question:visible').waitFor();
      await card.locator('#answer').fill('com.example.asked');
      await card.locator('#answer-send').click();
      const ended = await waitFor(client, id, (s) => !s.hasActiveWorkflows);
      expect(ended.lastWorkflow?.status).toBe('completed');
      await card.locator('#status').filter({ hasText: 'completed' }).waitFor();
      await card.locator('#deploys figure svg').first().waitFor();
      // The card hides the answered question once it reads the session that has none: wait for that state.
      await card.locator('#question').waitFor({ state: 'hidden' });
      expect(await card.locator('#question').isHidden()).toBe(true);
    } finally {
      await tab.close();
      await client.close();
      await quick.close();
    }
  });

  it("checks what the host answers with the SDK's schemas: a malformed tools/call result is refused, not shown", async (ctx) => {
    if (!browser) return ctx.skip();
    const client = await modernClient(server, token, true);
    const tab = await browser.newPage({ viewport: { width: 460, height: 900 } });
    const logged: string[] = [];
    tab.on('console', (message) => logged.push(message.text()));
    // A host that answers the card's svc_get_project with a result whose content is not a list.
    await tab.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) =>
      params.name === 'svc_get_project'
        ? { content: 'Tip Calculator', structuredContent: { name: 'Not checked' } }
        : client.callTool(params),
    );
    await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
    try {
      // A project of its own without a preview: its card asks for no screenshot (one a user at a time),
      // which would keep the next test's card from its own.
      const fresh = (
        (await client.callTool({ name: 'svc_create_project', arguments: { name: 'Checked' } })).structuredContent as {
          id: string;
        }
      ).id;
      const card = await openCard(tab, client, fresh);
      await card.locator('#error').filter({ hasText: 'Invalid result for tools/call' }).waitFor();
      expect(await card.locator('#name').textContent()).toBe('Project');
      // The card ran on the 2025-11-25 codec alone: nothing asked for the schemas it leaves out.
      expect(logged.filter((line) => line.includes('not bundled'))).toEqual([]);
    } finally {
      await tab.close();
      await client.close();
    }
  });

  it('renders the project, its running workflow, the screenshot and a QR code, and Cancel cancels the workflow', async (ctx) => {
    if (!browser) return ctx.skip();
    const client = await modernClient(server, token, true);
    const requests: string[] = [];
    const logged: string[] = [];
    const tab = await hostTab(client);
    tab.on('request', (request) => requests.push(request.url()));
    tab.on('console', (message) => logged.push(message.text()));
    try {
      await client.callTool({
        name: 'svc_send_message',
        arguments: { projectId, kind: 'build', message: 'Add a split-the-bill stepper' },
      });
      await waitFor(client, projectId, (s) => s.activeWorkflow?.status === 'running');
      const card = await openCard(tab, client, projectId);
      await card.locator('#name').filter({ hasText: 'Tip Calculator' }).waitFor();
      await card.locator('#status').filter({ hasText: 'running' }).waitFor();
      await card.locator('#deploys figure svg').first().waitFor();
      await card.locator('#shot:visible').waitFor();
      expect(await card.locator('#shot').evaluate((img: { naturalWidth: number }) => img.naturalWidth)).toBe(390);
      if (process.env.SVC_DOC_IMAGES === '1')
        await tab.locator('#card').screenshot({ path: join(ROOT, 'docs/images/app-card.png') });
      await card.locator('#cancel').click();
      const ended = await waitFor(client, projectId, (s) => !s.hasActiveWorkflows);
      expect(ended.lastWorkflow?.status).toBe('cancelled');
      await card.locator('#status').filter({ hasText: 'cancelled' }).waitFor();
      // The card fetched nothing itself: once the harness page and its script are in, no request at all.
      expect(requests).toEqual([]);
      // Nothing it did asked for what scripts/build-card.mjs leaves out (the 2026-07-28 wire schemas).
      expect(logged.filter((line) => line.includes('not bundled'))).toEqual([]);
    } finally {
      await tab.close();
      await client.close();
    }
  });
  it('asks again for a screenshot the server was busy with and shows it once the browser is free; shows a failed one, asking no more', async (ctx) => {
    if (!browser) return ctx.skip();
    // The browser: Chromium, started once `hold` is gone (each start leaves a `started.<pid>` file),
    // or no image at all while `fail` exists. The test decides when each run goes on.
    const gate = tempDir('mbm-card-gate-');
    const gated = join(gate, 'browser');
    writeFileSync(
      gated,
      `#!/bin/sh\ntouch "${gate}/started.$$"\nwhile [ -e "${gate}/hold" ]; do sleep 0.05; done\n[ -e "${gate}/fail" ] && exit 1\nexec ${CHROMIUM} "$@"\n`,
    );
    chmodSync(gated, 0o755);
    const started = () => readdirSync(gate).filter((f) => f.startsWith('started.')).length;
    const quick = await startTestServer({ browser: gated, buildSandbox: SANDBOX_TURNED_OFF });
    const own = quick.token('frank');
    const client = await modernClient(quick, own, true);
    type Shot = { status: string; busy?: true; reason?: string };
    /** A harness tab whose card's clock moves only when the test moves it, recording the card's calls. */
    async function recordingTab(): Promise<{ tab: Page; calls: string[]; shots: Shot[] }> {
      const tab = await browser!.newPage({ viewport: { width: 460, height: 900 } });
      const [calls, shots] = [[] as string[], [] as Shot[]];
      await tab.clock.install();
      await tab.exposeFunction(
        'hostCallTool',
        async (params: { name: string; arguments?: Record<string, unknown> }) => {
          calls.push(params.arguments?.screenshot ? 'screenshot' : params.name);
          const result = await client.callTool(params);
          const shot = (result.structuredContent as { screenshot?: Shot }).screenshot;
          if (shot) shots.push(shot);
          return result;
        },
      );
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
      await tab.clock.pauseAt(Date.now() + 1000);
      return { tab, calls, shots };
    }
    const tabs: Page[] = [];
    try {
      const built: string[] = [];
      for (const name of ['Held', 'Shown', 'Failed']) {
        const created = await client.callTool({ name: 'svc_create_project', arguments: { name } });
        const id = (created.structuredContent as { id: string }).id;
        await client.callTool({
          name: 'svc_send_message',
          arguments: { projectId: id, kind: 'build', message: 'Build' },
        });
        await waitFor(client, id, (s) => !s.hasActiveWorkflows);
        built.push(id);
      }
      const [heldId, shownId, failedId] = built as [string, string, string];
      // Frank's one browser is taken by a screenshot of another project, held before it renders.
      writeFileSync(join(gate, 'hold'), '');
      const held = toolResult(quick.mcpUrl, own, 'svc_get_session', { projectId: heldId, screenshot: true });
      await waitUntil(() => started() === 1, 60_000, 'the held browser to start');
      const busy = await recordingTab();
      tabs.push(busy.tab);
      const card = await openCard(busy.tab, client, shownId);
      await waitUntil(() => busy.shots.length === 1, 60_000, "the card's first screenshot answer");
      expect(busy.shots[0]).toMatchObject({ status: 'unavailable', busy: true });
      expect(await card.locator('#shot').isHidden()).toBe(true);
      // The held screenshot ends; only then does the card's clock move on to its next try (3 s).
      rmSync(join(gate, 'hold'));
      expect(await held).toMatchObject({ screenshot: { status: 'taken' } });
      await busy.tab.clock.runFor(3_000);
      // (Its render takes what a screenshot call may take at most.)
      await card.locator('#shot:visible').waitFor({ timeout: SCREENSHOT_LONGEST_MS });
      expect(await card.locator('#shot').evaluate((img: { naturalWidth: number }) => img.naturalWidth)).toBe(390);
      expect(busy.shots.map((s) => s.status)).toEqual(['unavailable', 'taken']);
      expect(await card.locator('#shot-note').textContent()).toBe('');
      expect(started()).toBe(2);

      // A preview whose render fails: the card says why, and asks no more, however long it stays open.
      writeFileSync(join(gate, 'fail'), '');
      const failed = await recordingTab();
      tabs.push(failed.tab);
      const failedCard = await openCard(failed.tab, client, failedId);
      await failedCard
        .locator('#shot-note')
        .filter({ hasText: 'the browser wrote no image' })
        .waitFor({ timeout: SCREENSHOT_LONGEST_MS });
      expect(failed.shots).toEqual([expect.objectContaining({ status: 'unavailable' })]);
      expect(failed.shots[0]).not.toHaveProperty('busy');
      await failed.tab.clock.runFor(200_000);
      // A call the card makes after that time: any screenshot call it made before would come first.
      await failedCard.locator('#deploy').click();
      await waitUntil(() => failed.calls.includes('svc_send_message'), 60_000, "the card's Deploy call");
      expect(failed.calls.slice(failed.calls.indexOf('screenshot') + 1)[0]).toBe('svc_send_message');
      expect(failed.calls.filter((c) => c === 'screenshot')).toHaveLength(1);
      expect(await failedCard.locator('#shot').isHidden()).toBe(true);
      expect(started()).toBe(3);
    } finally {
      rmSync(join(gate, 'hold'), { force: true });
      for (const tab of tabs) await tab.close();
      await client.close();
      await quick.close();
    }
  });
});
