/**
 * The OAuth flow through the consent page in real headless Chromium (playwright-core with Debian's
 * chromium), against the spawned bin: the SDK client asks to open the authorization URL, Chromium
 * opens it, the user types an API token and clicks Approve, and the browser lands on the client's
 * loopback redirect listener with the code (as a native host's listener would receive it).
 * Writes screenshots of the consent page under test-output/screenshots, and the copy docs/security.md shows
 * docs/images/oauth-consent.png when it is missing (or with UPDATE_DOC_SCREENSHOTS=1).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PNG } from 'pngjs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../chromium.js';
import { GENEROUS_PLANS, ROOT, tempDir, waitFor } from '../helpers.js';
import { cliToken, spawnHttpServer, type SpawnedServer } from '../bin-helpers.js';
import {
  connectUntilRedirect,
  loopbackServer,
  MemoryOAuthProvider,
  oauthClient,
  type LoopbackServer,
} from './oauth-helpers.js';

const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');
const DOCS_IMAGE = join(ROOT, 'docs', 'images', 'oauth-consent.png');

let dataDir: string;
let server: SpawnedServer;
let apiToken: string;
let browser: Browser | null;
let listener: LoopbackServer;

beforeAll(async () => {
  dataDir = tempDir();
  apiToken = cliToken(dataDir, 'alice');
  writeFileSync(join(dataDir, 'plans.json'), JSON.stringify(GENEROUS_PLANS));
  server = await spawnHttpServer(dataDir, ['--scripted-step-ms', '20', '--plans', join(dataDir, 'plans.json')]);
  listener = await loopbackServer();
  browser = await launchChromium();
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await listener?.close();
  await server?.stop();
});

/** Width, height and number of distinct colours of a PNG file (a blank page has one or two). */
function pngFacts(file: string): { width: number; height: number; colours: number } {
  const png = PNG.sync.read(readFileSync(file));
  const colours = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4 * 7) colours.add(png.data.readUInt32BE(i));
  return { width: png.width, height: png.height, colours: colours.size };
}

describe('the consent page in headless Chromium', () => {
  it('approving with an API token sends the browser to the client with a code; the SDK client then calls a tool', async (ctx) => {
    if (!browser) return ctx.skip();
    const redirect = `${listener.url}/callback`;
    const provider = new MemoryOAuthProvider(redirect, 'Chromium Test Host');
    const first = oauthClient(server.mcpUrl, provider);
    const url = await connectUntilRedirect(first.client, first.transport, provider);

    const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
    const tab = await context.newPage();
    const problems: string[] = [];
    tab.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    tab.on('pageerror', (e) => problems.push(e.message));
    await tab.goto(url.href);
    await expect.poll(() => tab.locator('body').innerText()).toContain('Chromium Test Host');
    expect(await tab.locator('body').innerText()).toContain('127.0.0.1');

    mkdirSync(SCREENSHOTS, { recursive: true });
    const shot = join(SCREENSHOTS, 'consent.png');
    await tab.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    const facts = pngFacts(shot);
    expect(facts.width).toBe(900);
    expect(facts.colours).toBeGreaterThan(8);
    // The picture of docs/security.md is written when missing, or on demand, so a test run leaves the work tree clean.
    if (!existsSync(DOCS_IMAGE) || process.env.UPDATE_DOC_SCREENSHOTS === '1') {
      mkdirSync(dirname(DOCS_IMAGE), { recursive: true });
      copyFileSync(shot, DOCS_IMAGE);
    }

    await tab.locator('input[name="credential"]').fill(apiToken);
    await tab.locator('button[name="decision"][value="approve"]').click();
    const back = await waitFor(
      () => listener.requests.find((r) => r.pathname === '/callback'),
      30_000,
      'the browser to reach the redirect listener',
    );
    await tab.waitForURL((u) => u.href.startsWith(redirect));
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    const code = back.searchParams.get('code');
    expect(code).toBeTruthy();
    // CSP must not have blocked anything the page needs (its form, or the redirect after it).
    expect(problems).toEqual([]);
    await context.close();

    await first.transport.finishAuth(code!);
    const next = oauthClient(server.mcpUrl, provider);
    await next.client.connect(next.transport);
    const created = await next.client.callTool({
      name: 'svc_create_project',
      arguments: { name: 'From Chromium consent' },
    });
    expect(created.isError).toBeFalsy();
    expect((created.structuredContent as any).name).toBe('From Chromium consent');
    await next.client.close();
  });

  it('works without JavaScript: a wrong token shows an error, Deny returns error=access_denied', async (ctx) => {
    if (!browser) return ctx.skip();
    const redirect = `${listener.url}/denied`;
    const provider = new MemoryOAuthProvider(redirect, 'No Script Host');
    const first = oauthClient(server.mcpUrl, provider);
    const url = await connectUntilRedirect(first.client, first.transport, provider);
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 900, height: 900 } });
    const tab = await context.newPage();
    await tab.goto(url.href);
    await tab.locator('input[name="credential"]').fill('svc_this-is-not-a-token');
    const [refused] = await Promise.all([
      tab.waitForNavigation(),
      tab.locator('button[name="decision"][value="approve"]').click(),
    ]);
    expect(refused?.status()).toBe(401);
    expect(await tab.locator('body').innerText()).toContain('No Script Host');
    await tab.screenshot({ path: join(SCREENSHOTS, 'consent-refused.png'), fullPage: true });
    expect(listener.requests.some((r) => r.pathname === '/denied')).toBe(false);

    await tab.locator('button[name="decision"][value="deny"]').click();
    const back = await waitFor(
      () => listener.requests.find((r) => r.pathname === '/denied'),
      30_000,
      'the browser to reach the redirect listener',
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    await context.close();
  });
});
