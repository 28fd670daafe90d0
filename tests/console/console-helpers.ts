/**
 * Helpers of the web console tests: signing in over raw HTTP (for header and status checks) and
 * screenshots that are checked not to be blank.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { bounded, ROOT } from '../helpers.js';

/** Where the console tests write their screenshots (gitignored). */
const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');

/** The pictures of docs/console.md (and two in the README). */
const DOC_IMAGES = join(ROOT, 'docs', 'images');

/**
 * Takes a full-page screenshot `console-<name>.png` and checks it is a real picture: a few KiB at
 * least, and many distinct colours (a blank or single-colour page has a handful). With `docs`, the
 * doc's copy `docs/images/console-<name>.png` is written when missing, or on demand
 * (`UPDATE_DOC_SCREENSHOTS=1`), so that a test run leaves the work tree clean.
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `console-${name}.png`);
  // The whole page in one viewport: a frame from another origin below the fold is not painted
  // into a full-page capture.
  const viewport = page.viewportSize() ?? { width: 1280, height: 900 };
  const height = await page.evaluate(() => (globalThis as any).document.documentElement.scrollHeight as number);
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  for (const frame of await page.$$('iframe')) {
    // Two animation frames of the frame's own document: it has painted at least once.
    await (
      await frame.contentFrame()
    )?.evaluate(
      () =>
        new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(resolve)),
        ),
    );
  }
  await page.screenshot({ path: file });
  await page.setViewportSize(viewport);
  expect(statSync(file).size, `${file} size`).toBeGreaterThan(8 * 1024);
  const png = PNG.sync.read(readFileSync(file));
  const colours = new Set<number>();
  for (let i = 0; i < png.data.length && colours.size < 64; i += 4 * 7) colours.add(png.data.readUInt32BE(i));
  expect(colours.size, `${file} distinct colours`).toBeGreaterThanOrEqual(16);
  const docCopy = join(DOC_IMAGES, `console-${name}.png`);
  if (options.docs && (!existsSync(docCopy) || process.env.UPDATE_DOC_SCREENSHOTS === '1')) copyFileSync(file, docCopy);
  return file;
}

/** A signed-in console session over raw HTTP: the cookie header to send and the page's CSRF token. */
export interface RawSession {
  cookie: string;
  csrf: string;
}

/** Signs in at `/signin` like a browser with cookies would, without one. */
export async function rawSignIn(base: string, credential: string): Promise<RawSession> {
  const form = await fetch(`${base}/signin`, { redirect: 'manual' });
  const signinCookie = form.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_signin='))!
    .split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: signinCookie, Origin: base },
    body: new URLSearchParams({ csrf, credential }).toString(),
  });
  expect(res.status).toBe(303);
  const session = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_session='))!
    .split(';')[0]!;
  const projects = await fetch(`${base}/projects`, { headers: { Cookie: session } });
  const pageCsrf = /name="csrf" value="([^"]+)"/.exec(await projects.text())![1]!;
  return { cookie: session, csrf: pageCsrf };
}

/** A new page of `context` on the console at `base`, signed in with `token` (the session cookie is shared by the context's pages). */
export async function signedInPage(context: BrowserContext, base: string, token: string): Promise<Page> {
  const p = await bounded('a new page', context.newPage());
  await p.goto(`${base}/projects`);
  if (p.url() === `${base}/signin`) {
    await p.fill('#credential', token);
    await Promise.all([p.waitForURL(`${base}/projects`), p.click('#sign-in')]);
  }
  return p;
}
