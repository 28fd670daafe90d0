/**
 * The web console end to end in real headless Chromium (playwright-core with Debian's chromium):
 * sign in, create a project, a build that the open page follows live to completed (no reload),
 * the web preview in its frame from the artifact origin, a question answered (the browser's and
 * the server's rules), a deployment with its QR code, cancel, sign out; a second user sees none
 * of the first user's private projects. Screenshots of each page are checked not to be blank.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../../src/app.js';
import type { RunningHttpServer } from '../../src/transports/http-server.js';
import { launchChromium } from '../chromium.js';
import { startTestServer, toolResult, type TestServer } from '../helpers.js';
import { screenshot } from './console-helpers.js';

let server: TestServer;
let artifacts: RunningHttpServer;
let browser: Browser | null = null;
let base: string;
let aliceToken: string;
let alice: BrowserContext;
let page: Page;
/** The project alice creates through the console. */
let projectId: string;
const NAME = '<b>Shop</b> & "Friends"';

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted', scriptedStepMs: 20 });
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  base = server.http.url;
  aliceToken = server.token('alice');
  browser = await launchChromium();
  if (browser) {
    alice = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await alice.newPage();
  }
});

afterAll(async () => {
  await browser?.close();
  await artifacts?.close();
  await server?.close();
});

/** Signs `page` in with `credential` and waits for the projects page. */
async function signIn(p: Page, credential: string): Promise<void> {
  await p.goto(`${base}/signin`);
  await p.fill('#credential', credential);
  await Promise.all([p.waitForURL(`${base}/projects`), p.click('#sign-in')]);
}

describe('web console in Chromium', () => {
  it('signs in with an API token (a bad one is refused with the contract error)', async (t) => {
    if (!browser) return t.skip();
    await page.goto(`${base}/`);
    await page.waitForURL(`${base}/signin`);
    await screenshot(page, 'signin', { docs: true });
    await page.fill('#credential', 'svc_not-a-real-token');
    const refused = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/signin` && r.request().method() === 'POST'),
      page.click('#sign-in'),
    ]);
    expect(refused[0].status()).toBe(401);
    await expect(page.textContent('#error')).resolves.toContain('Authentication failed - invalid or expired API key');

    await signIn(page, aliceToken);
    await expect(page.textContent('#user-name')).resolves.toBe('alice');
    await page.waitForSelector('#no-projects');
    // The token is in no URL and in no storage the page can read.
    expect(page.url()).not.toContain(aliceToken);
    const stored = await page.evaluate(() => {
      const g = globalThis as any;
      return JSON.stringify({ ...g.localStorage }) + JSON.stringify({ ...g.sessionStorage }) + g.document.cookie;
    });
    expect(stored).not.toContain('svc_');
    const cookies = await alice.cookies();
    const session = cookies.find((c) => c.name === 'svc_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(session.value).not.toContain(aliceToken);
  });

  it('creates a project with the tool rules: a blank name is refused, text is escaped', async (t) => {
    if (!browser) return t.skip();
    await page.fill('#name', '   ');
    const blank = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/projects` && r.request().method() === 'POST'),
      page.click('#create'),
    ]);
    expect(blank[0].status()).toBe(400);
    await expect(page.textContent('#error')).resolves.toContain(
      '-32602 Invalid parameter: name must not be empty or blank',
    );

    await page.fill('#name', NAME);
    await page.fill('#description', 'A <script>alert(1)</script> test');
    await Promise.all([page.waitForURL(/\/projects\/[0-9a-f-]{36}$/), page.click('#create')]);
    projectId = page.url().split('/').pop()!;
    await expect(page.textContent('#project-name')).resolves.toBe(NAME);
    expect(await page.$$('#project-name b, main script')).toHaveLength(0);
    await page.goto(`${base}/projects`);
    await page.waitForSelector(`[data-project-id="${projectId}"]`);
    await screenshot(page, 'projects', { docs: true });
  });

  it('follows a build live to completed without reloading, then shows the preview from the artifact origin', async (t) => {
    if (!browser) return t.skip();
    await page.goto(`${base}/projects/${projectId}`);
    await page.waitForSelector('#live[data-state="on"]');
    await page.evaluate(() => ((globalThis as any).marker = 'same page'));

    // Sent by an MCP client elsewhere: the open page learns of it only through its event stream.
    await toolResult(server.mcpUrl, aliceToken, 'svc_send_message', {
      projectId,
      message: 'Build a shop with a cart',
      kind: 'build',
    });
    await page.waitForSelector('#last-workflow[data-status="completed"]');
    // The build is one folded entry, newest first: its instruction and latest line show; its lines open on a click.
    await page.waitForSelector('#messages > li.entry:first-child .entry-title:has-text("Build a shop with a cart")');
    // The summary shows what the build came to: its result.
    await page.waitForSelector(
      '#messages > li.entry:first-child .entry-latest[data-type="result"]:has-text("Web preview published at")',
    );
    await page.click('#messages > li.entry:first-child summary');
    await page.waitForSelector(
      '#messages > li.entry:first-child li[data-type="instruction"]:has-text("Build a shop with a cart")',
    );
    await page.waitForSelector('#messages > li.entry:first-child li:has-text("Build completed.")');
    // Lines that arrived live were merged into the one entry: its count is the workflow's messages.
    const { messages } = await toolResult(server.mcpUrl, aliceToken, 'svc_get_messages', { projectId, limit: 500 });
    const entry = page.locator('#messages > li.entry:first-child');
    const workflowId = await entry.getAttribute('data-workflow-id');
    const count = messages.filter((m: any) => m.workflowId === workflowId).length;
    expect(await entry.locator('.lines > li').count()).toBe(count);
    await expect(entry.locator('.entry-count').getAttribute('data-count')).resolves.toBe(String(count));
    expect(await page.locator('#messages > li.entry').count()).toBe(1);
    await page.waitForSelector('#preview-frame');
    expect(await page.evaluate(() => (globalThis as any).marker)).toBe('same page');

    const src = await page.getAttribute('#preview-frame', 'src');
    expect(new URL(src!).origin).toBe(`http://${projectId}.localhost:${artifacts.port}`);
    const frame = page.frameLocator('#preview-frame');
    await expect(frame.locator('body').textContent()).resolves.toContain('Shop');

    // And one sent from the page's own form, with an explicit kind.
    await page.fill('#message', 'Add a dark mode');
    await page.check('input[name="kind"][value="build"]');
    await Promise.all([page.waitForURL(`${base}/projects/${projectId}`), page.click('#send-button')]);
    await page.waitForSelector('#messages > li.entry:first-child .entry-title:has-text("Add a dark mode")');
    await page.waitForSelector('#no-active');
    await page.waitForSelector('#last-workflow[data-status="completed"]');
    await page.frameLocator('#preview-frame').locator('text=Add a dark mode').waitFor();
    await screenshot(page, 'project', { docs: true });
  });

  it('shows the pending question live, enforces its pattern, and answers it; the deployment gets a QR code', async (t) => {
    if (!browser) return t.skip();
    await page.goto(`${base}/projects/${projectId}`);
    await page.waitForSelector('#live[data-state="on"]');
    await page.fill('#message', 'Ship it');
    await page.check('input[name="kind"][value="deploy"]');
    await Promise.all([page.waitForURL(`${base}/projects/${projectId}`), page.click('#send-button')]);
    await page.waitForSelector('#question');
    await page.waitForSelector('#live[data-state="on"]');
    await page.waitForSelector('#active-workflow[data-status="waiting_for_input"]');
    await page.frameLocator('#preview-frame').locator('text=Add a dark mode').waitFor();
    await screenshot(page, 'question', { docs: true });

    // The browser refuses an answer that breaks the pattern before sending it...
    await page.fill('#answer', 'not an identifier');
    await page.click('[data-action="answer"]');
    expect(await page.$eval('#answer', (el) => (el as any).validity.patternMismatch)).toBe(true);
    // ...and the server refuses it too (a browser that does not check), with the tool's error.
    await page.$eval('#question form', (form) => ((form as any).noValidate = true));
    const bad = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/answer')),
      page.click('[data-action="answer"]'),
    ]);
    expect(bad[0].status()).toBe(400);
    await expect(page.textContent('#error')).resolves.toContain('-32602 Invalid parameter: message');
    // Next to the answer box it concerns, which has the focus.
    expect(await page.$('#question form #error')).not.toBeNull();
    await expect(page.evaluate(() => (globalThis as any).document.activeElement.id)).resolves.toBe('answer');
    await page.waitForSelector('#question');

    await page.fill('#answer', 'com.example.shop');
    await Promise.all([page.waitForURL(`${base}/projects/${projectId}`), page.click('[data-action="answer"]')]);
    await page.waitForSelector('#last-workflow[data-status="completed"]');
    await page.waitForSelector('#deployments .deployment[data-platform="web"] .qr svg');
    await page.frameLocator('#preview-frame').locator('text=Add a dark mode').waitFor();
    await screenshot(page, 'deployment', { docs: true });
  });

  it('cancels a workflow that waits for an answer', async (t) => {
    if (!browser) return t.skip();
    await page.goto(`${base}/projects`);
    await page.fill('#name', 'Cancel me');
    await Promise.all([page.waitForURL(/\/projects\/[0-9a-f-]{36}$/), page.click('#create')]);
    await page.fill('#message', 'Deploy now');
    await page.check('input[name="kind"][value="deploy"]');
    await Promise.all([page.waitForURL(/\/projects\/[0-9a-f-]{36}$/), page.click('#send-button')]);
    await page.waitForSelector('#question');
    await Promise.all([
      page.waitForURL(/\/projects\/[0-9a-f-]{36}$/),
      page.click('#active-workflow [data-action="cancel"]'),
    ]);
    await page.waitForSelector('#last-workflow[data-status="cancelled"]');
    await page.waitForSelector('#no-active');
  });

  it("shows a second user none of the first user's private projects, and refuses a direct URL", async (t) => {
    if (!browser) return t.skip();
    const bob = await browser.newContext();
    try {
      const other = await bob.newPage();
      await signIn(other, server.token('bob'));
      await other.waitForSelector('#no-projects');
      expect(await other.content()).not.toContain('Shop');
      const direct = await other.goto(`${base}/projects/${projectId}`);
      expect(direct!.status()).toBe(403);
      await expect(other.textContent('#error')).resolves.toContain(
        '-32003 Access denied - you do not have permission for this resource',
      );
      expect(await other.content()).not.toContain('Shop');
      const unknown = await other.goto(`${base}/projects/00000000-0000-4000-8000-000000000000`);
      expect(unknown!.status()).toBe(404);
      await expect(other.textContent('#error')).resolves.toContain('-32004 Resource not found');
      await screenshot(other, 'refused');
      const malformed = await other.goto(`${base}/projects/not-a-uuid`);
      expect(malformed!.status()).toBe(400);
      await expect(other.textContent('#error')).resolves.toContain(
        '-32602 Invalid parameter: projectId must be a UUID',
      );
      // Bob's own project, with a page parameter the tool refuses.
      await other.goto(`${base}/projects`);
      await other.fill('#name', 'Bob app');
      await Promise.all([other.waitForURL(/\/projects\/[0-9a-f-]{36}$/), other.click('#create')]);
      const badPage = await other.goto(`${other.url()}?limit=9999`);
      expect(badPage!.status()).toBe(400);
      await expect(other.textContent('#error')).resolves.toContain('-32602 Invalid parameter: limit');
    } finally {
      await bob.close();
    }
  });

  it('works as plain forms with JavaScript off', async (t) => {
    if (!browser) return t.skip();
    const plain = await browser.newContext({ javaScriptEnabled: false });
    try {
      const p = await plain.newPage();
      await signIn(p, server.token('nojs'));
      await p.fill('#name', 'No script');
      await Promise.all([p.waitForURL(/\/projects\/[0-9a-f-]{36}$/), p.click('#create')]);
      const url = p.url();
      await p.fill('#message', 'Build without script');
      await Promise.all([p.waitForURL(url), p.click('#send-button')]);
      await expect(p.textContent('#live')).resolves.toBe('live updates off');
      // Without the script the page does not update itself: reloading shows the progress.
      for (;;) {
        await p.goto(url);
        if (await p.$('#last-workflow[data-status="completed"]')) break;
        await p.waitForTimeout(100);
      }
      await p.waitForSelector('#messages .entry-latest:has-text("Web preview published at")');
      // The folded entry opens on a click without script too (<details>).
      await p.click('#messages > li.entry:first-child summary');
      await p.waitForSelector('#messages li[data-type="instruction"]:has-text("Build without script")');
    } finally {
      await plain.close();
    }
  });

  it('signs out: the session ends and pages go back to the sign-in form', async (t) => {
    if (!browser) return t.skip();
    await page.goto(`${base}/projects`);
    await Promise.all([page.waitForURL(`${base}/signin`), page.click('#sign-out')]);
    expect((await alice.cookies()).find((c) => c.name === 'svc_session')).toBeUndefined();
    await page.goto(`${base}/projects/${projectId}`);
    await page.waitForURL(`${base}/signin`);
  });
});
