/**
 * Tenant isolation of previews in real headless Chromium and over raw HTTP: each project's preview
 * runs on its own origin (`<project-id>.localhost:<artifact port>`), so a hostile preview viewed in
 * the console can neither plant its author's console session in the visitor's browser nor evict
 * the visitor's by flooding cookies, one project's `localStorage` is not another's, and a request
 * another site or host starts (`Sec-Fetch-Site: cross-site`/`same-site`) gets no console session
 * and spends no request budget. Under https the session cookie is `__Host-`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../../src/app.js';
import type { RunningHttpServer } from '../../src/transports/http-server.js';
import { launchChromium } from '../chromium.js';
import { createProject, rawHttp, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { rawSignIn } from './console-helpers.js';

let server: TestServer;
let artifacts: RunningHttpServer;
let browser: Browser | null;
let base: string;

beforeAll(async () => {
  // Each build publishes the instruction itself as the preview's index.html.
  const dir = tempDir('mbm-origins-');
  const config = join(dir, 'builder.json');
  writeFileSync(
    config,
    JSON.stringify({
      build: { command: 'mkdir -p out && printf "%s" "$SVC_INSTRUCTION" > out/index.html && echo "::preview web out"' },
    }),
  );
  server = await startTestServer({ builder: 'command', builderConfigFile: config });
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  base = server.http.url;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await artifacts?.close();
  await server?.close();
});

/** A public project of `token`'s user whose web preview is `html`; returns it with the preview URL. */
async function previewOf(token: string, name: string, html: string): Promise<{ id: string; url: string }> {
  const project = await createProject(server.mcpUrl, token, { name, visibility: 'public' });
  await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: html, kind: 'build' });
  const session = await waitIdle(server.mcpUrl, token, project.id);
  expect(session.lastWorkflow.status).toBe('completed');
  return { id: project.id, url: session.previewUrls.find((p: any) => p.platform === 'web').url };
}

async function signIn(context: BrowserContext, credential: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${base}/signin`);
  await page.fill('#credential', credential);
  await Promise.all([page.waitForURL(`${base}/projects`), page.click('#sign-in')]);
  return page;
}

describe('previews on their own origins', () => {
  it("previewUrls name each project's own origin", async () => {
    const token = server.token('paula');
    const preview = await previewOf(token, 'Plain', '<h1>plain</h1>');
    expect(new URL(preview.url).origin).toBe(`http://${preview.id}.localhost:${artifacts.port}`);
  });

  it('a preview viewed in the console plants no session and evicts none (cookie flood), while the visitor is signed in', async (ctx) => {
    if (!browser) return ctx.skip();
    const attacker = await browser.newContext();
    const victim = await browser.newContext();
    try {
      // The attacker signs in in their own browser context and takes their session cookie.
      await signIn(attacker, server.token('mallory'));
      const stolen = (await attacker.cookies(base)).find((c) => c.name === 'svc_session')!;
      expect(stolen).toBeDefined();
      const planted = `svc_session=${stolen.value}`;
      const script = [
        // Flood first (evicts older cookies of the host, HttpOnly ones included), then plant.
        'for (let i = 0; i < 220; i++) document.cookie = "flood" + i + "=" + "x".repeat(40) + "; path=/";',
        `for (const attrs of ["; path=/", "; path=/projects", "; domain=localhost; path=/", "; domain=127.0.0.1; path=/"]) document.cookie = ${JSON.stringify(planted)} + attrs;`,
        'document.getElementById("state").textContent = "done";',
      ].join('\n');
      const hostile = await previewOf(
        server.token('mallory'),
        'Free game',
        `<!doctype html><p id="state">running</p><script>${script}</script>`,
      );

      const page = await signIn(victim, server.token('victor'));
      await page.goto(`${base}/projects/${hostile.id}`);
      const frame = await (await page.waitForSelector('#preview-frame')).contentFrame();
      await frame!.waitForFunction(() => (globalThis as any).document.getElementById('state')?.textContent === 'done');

      // Still signed in (not sent to the sign-in page), and as themselves.
      await page.goto(`${base}/projects`);
      expect(page.url()).toBe(`${base}/projects`);
      expect(await page.textContent('#user-name')).toBe('victor');
      const consoleCookies = await victim.cookies(base);
      expect(consoleCookies.some((c) => c.value === stolen.value)).toBe(false);
      expect(consoleCookies.filter((c) => c.name === 'svc_session')).toHaveLength(1);
      expect(consoleCookies.some((c) => c.name.startsWith('flood'))).toBe(false);
    } finally {
      await attacker.close();
      await victim.close();
    }
  });

  it("one project's localStorage is not readable by another project's preview", async (ctx) => {
    if (!browser) return ctx.skip();
    const token = server.token('lena');
    const writer = await previewOf(
      token,
      'Writer',
      '<!doctype html><p id="state">running</p><script>localStorage.setItem("secret", "from-A"); document.getElementById("state").textContent = "done";</script>',
    );
    const reader = await previewOf(
      token,
      'Reader',
      '<!doctype html><p id="state">running</p><script>document.getElementById("state").textContent = "read:" + localStorage.getItem("secret");</script>',
    );
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(writer.url);
      await page.waitForFunction(() => (globalThis as any).document.getElementById('state')?.textContent === 'done');
      await page.goto(reader.url);
      await page.waitForFunction(() =>
        (globalThis as any).document.getElementById('state')?.textContent?.startsWith('read:'),
      );
      expect(await page.textContent('#state')).toBe('read:null');
      // The writer still reads its own.
      await page.goto(writer.url.replace(/\/$/, '/index.html'));
      expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('secret'))).toBe('from-A');
    } finally {
      await context.close();
    }
  });
});

describe('console requests from other sites', () => {
  it('get no session and spend no request budget when Sec-Fetch-Site is not same-origin or none', async () => {
    const session = await rawSignIn(base, server.token('sid'));
    const remaining = async (site: string) => {
      const res = await rawHttp(`${base}/projects`, { headers: { Cookie: session.cookie, 'Sec-Fetch-Site': site } });
      return {
        status: res.status,
        location: res.headers.location,
        remaining: Number(res.headers['x-ratelimit-remaining']),
      };
    };
    const first = await remaining('same-origin');
    expect(first.status).toBe(200);
    for (const site of ['cross-site', 'same-site']) {
      const refused = await remaining(site);
      expect(refused.status).toBe(303);
      expect(refused.location).toBe('/signin');
      expect(Number.isNaN(refused.remaining)).toBe(true);
    }
    const typed = await remaining('none');
    expect(typed.status).toBe(200);
    // Only the two own requests were counted.
    expect(typed.remaining).toBe(first.remaining - 1);
  });

  it('under https the session cookie is __Host- prefixed', async () => {
    const secure = await startTestServer({ builder: 'scripted', publicUrl: 'https://console.example.com' });
    try {
      const form = await rawHttp(`${secure.http.url}/signin`, { headers: { Host: 'console.example.com' } });
      const setCookie = ([] as string[]).concat(form.headers['set-cookie'] ?? []);
      expect(
        setCookie.some((c) =>
          /^__Host-svc_signin=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/.test(c),
        ),
      ).toBe(true);
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
      const signed = await rawHttp(`${secure.http.url}/signin`, {
        method: 'POST',
        headers: {
          Host: 'console.example.com',
          Origin: 'https://console.example.com',
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: setCookie[0]!.split(';')[0]!,
        },
        body: new URLSearchParams({ csrf, credential: secure.token('hana') }).toString(),
      });
      expect(signed.status).toBe(303);
      const session = ([] as string[])
        .concat(signed.headers['set-cookie'] ?? [])
        .find((c) => c.includes('svc_session='))!;
      expect(session).toMatch(/^__Host-svc_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
      const projects = await rawHttp(`${secure.http.url}/projects`, {
        headers: { Host: 'console.example.com', Cookie: session.split(';')[0]! },
      });
      expect(projects.status).toBe(200);
    } finally {
      await secure.close();
    }
  });
});
