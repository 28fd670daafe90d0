/**
 * Following a build in the web console, in real headless Chromium, with the `command` builder
 * (its commands wait on files the test creates, so nothing depends on timing):
 * - a project page with 200 messages fits in a few screens (measured), opens at the newest entry,
 *   folds each workflow into one entry that opens on a click, offers earlier messages on demand,
 *   and keeps the session panel in view when scrolled to the bottom;
 * - queued workflows show their instruction's first line beside their Cancel button;
 * - the waiting hint shows only while a question waits;
 * - one deploy of web, ios and android is `Deploy #1: web, ios, android`, the next `Deploy #2`;
 * - times are relative, with the exact time in the browser's time zone on hover, and exact UTC
 *   without script; `/favicon.ico` is an icon;
 * - a refused create form shows its error next to the field, in view, however long the list;
 *   "nothing to cancel" says so.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../chromium.js';
import { createProject, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { signedInPage as signedInConsolePage, rawSignIn, screenshot } from './console-helpers.js';

let server: TestServer;
let browser: Browser | null = null;
let base: string;
let token: string;
let context: BrowserContext;
/** A build whose instruction ends `hold NAME` waits until the file `gate-NAME` exists in this folder. */
let gates: string;

const VIEWPORT = { width: 1280, height: 900 };

beforeAll(async () => {
  const dir = tempDir('mbm-console-follow-');
  gates = dir;
  const build = [
    'echo "::step 1/3 Reading the instruction"',
    `case "$SVC_INSTRUCTION" in *"hold "*) while [ ! -e '${dir}'/gate-"\${SVC_INSTRUCTION##*hold }" ]; do sleep 0.05; done;; esac`,
    'echo "::step 2/3 Changing the app"',
    'mkdir -p out && echo "<h1>$SVC_PROJECT_NAME</h1><p>$SVC_INSTRUCTION</p>" > out/index.html',
    'echo "::step 3/3 Publishing the preview"',
    'echo "::preview web out"',
    'echo "::result built: $SVC_INSTRUCTION"',
  ].join('\n');
  const deploy = [
    'echo "::step 1/2 Choosing the channel"',
    'echo \'::ask channel {"prompt":"Which release channel?","options":["beta","production"]}\'',
    'read answer',
    'echo "::step 2/2 Publishing web, ios and android"',
    'mkdir -p out && echo "<h1>$SVC_PROJECT_NAME</h1>" > out/index.html',
    'for p in web ios android; do echo "::deployment $p out"; done',
    'echo "::result deployed to $answer"',
  ].join('\n');
  const file = join(dir, 'builder.json');
  writeFileSync(file, JSON.stringify({ build: { command: build }, deploy: { command: deploy } }));
  server = await startTestServer({ builder: 'command', builderConfigFile: file, cancelTimeoutMs: 10_000 });
  base = server.http.url;
  token = server.token('dana');
  browser = await launchChromium();
  // A browser in another time zone than the server's UTC.
  if (browser)
    context = await browser.newContext({ viewport: VIEWPORT, timezoneId: 'America/New_York', locale: 'en-US' });
});

/** Lets the builds held at gate `name` go on. */
function open(name: string): void {
  writeFileSync(join(gates, `gate-${name}`), '');
}

afterAll(async () => {
  for (const name of ['queue']) if (gates && !existsSync(join(gates, `gate-${name}`))) open(name);
  await browser?.close();
  await server?.close();
});

/** A page of `context`, signed in with the test's token. */
const signedInPage = (): Promise<Page> => signedInConsolePage(context, base, token);

/** The project's message count. */
async function messageCount(projectId: string): Promise<number> {
  const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 500 });
  return messages.length;
}

describe('following a build in the console', () => {
  it('fits a project page with 200 messages in a few screens, newest first, folded per workflow, with the session in view', async (t) => {
    if (!browser) return t.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Long history' });
    let n = 0;
    while ((await messageCount(project.id)) < 200) {
      // Sent in a burst: they queue, and run one after the other.
      for (let i = 0; i < 10; i++)
        await toolResult(server.mcpUrl, token, 'svc_send_message', {
          projectId: project.id,
          message: `Change ${++n}: make the header a little bigger\nand more details on a second line`,
          kind: 'build',
        });
      await waitIdle(server.mcpUrl, token, project.id, 60_000);
    }
    const total = await messageCount(project.id);
    expect(total).toBeGreaterThanOrEqual(200);

    const p = await signedInPage();
    await p.goto(`${base}/projects/${project.id}`);
    await p.waitForSelector('#live[data-state="on"]');
    const height = await p.evaluate(() => (globalThis as any).document.documentElement.scrollHeight as number);
    process.stderr.write(
      `[console-follow] project page with ${total} messages (${n} builds): ${height} px tall at ${VIEWPORT.width}x${VIEWPORT.height}\n`,
    );
    expect(height).toBeLessThanOrEqual(3 * VIEWPORT.height);

    // Newest first: the first entry is the last build, folded, its instruction's first line as its title.
    const first = p.locator('#messages > li.entry').first();
    await expect(first.locator('.entry-title').textContent()).resolves.toBe(
      `Change ${n}: make the header a little bigger`,
    );
    await expect(first.locator('.entry-latest').textContent()).resolves.toBe(
      `built: Change ${n}: make the header a little bigger`,
    );
    expect(await first.locator('.lines').isVisible()).toBe(false);
    await first.locator('summary').click();
    await first.locator('.lines li[data-type="progress"]').first().waitFor();
    const entries = await p.locator('#messages > li.entry').count();
    expect(entries).toBeLessThan(30);

    // Scrolled to the bottom, the session panel is still on screen.
    await p.evaluate(() =>
      (globalThis as any).window.scrollTo(0, (globalThis as any).document.documentElement.scrollHeight),
    );
    const session = (await p.locator('#session').boundingBox())!;
    expect(session.y).toBeGreaterThanOrEqual(0);
    expect(session.y).toBeLessThan(VIEWPORT.height / 2);

    // Earlier messages on demand, at the bottom of the conversation.
    await Promise.all([p.waitForURL(/after=\d+/), p.click('a.earlier')]);
    await p.waitForSelector('#messages > li.entry');
    expect(await p.locator('a.later').count()).toBe(1);
    await screenshot(p, 'long-history', { docs: true });
    await p.close();
  });

  it('names each queued workflow by its instruction beside its Cancel button', async (t) => {
    if (!browser) return t.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Queue names' });
    const p = await signedInPage();
    await p.goto(`${base}/projects/${project.id}`);
    await p.waitForSelector('#live[data-state="on"]');

    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Add a cart, hold queue',
      kind: 'build',
    });
    const search = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Add a search bar\nwith suggestions under it',
      kind: 'build',
    });
    const dark = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Dark mode for the settings screen',
      kind: 'build',
    });
    expect([search.status, dark.status]).toEqual(['queued', 'queued']);
    // Live, without a reload: the active build and the two queued ones, each named.
    await p.waitForSelector('#active-workflow .title:has-text("Add a cart, hold queue")');
    await p.waitForSelector(`#queue li[data-workflow-id="${dark.workflowId}"]`);
    const rows = await p.$$eval('#queue li', (items) => items.map((li) => li.textContent!.replace(/\s+/g, ' ').trim()));
    expect(rows).toEqual(['build “Add a search bar” Cancel', 'build “Dark mode for the settings screen” Cancel']);
    await expect(
      p.getAttribute(`#queue li[data-workflow-id="${search.workflowId}"] button`, 'aria-label'),
    ).resolves.toBe('Cancel build: Add a search bar');
    await screenshot(p, 'queue-names', { docs: true });

    // The button named by the instruction cancels that one, and only that one.
    await Promise.all([
      p.waitForURL(`${base}/projects/${project.id}`),
      p.getByRole('button', { name: 'Cancel build: Dark mode for the settings screen' }).click(),
    ]);
    await p.waitForSelector(`#queue li[data-workflow-id="${dark.workflowId}"]`, { state: 'detached' });
    expect(await p.$$eval('#queue li', (items) => items.map((li) => li.getAttribute('data-workflow-id')))).toEqual([
      search.workflowId,
    ]);
    open('queue');
    await waitIdle(server.mcpUrl, token, project.id, 60_000);
    await p.waitForSelector('#no-active');
    await p.waitForSelector('#messages > li.entry:first-child .entry-latest:has-text("built: Add a search bar")');
    await p.close();
  });

  it('shows the waiting hint only while a question waits, and numbers each deploy once for its platforms', async (t) => {
    if (!browser) return t.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Deploys' });
    const p = await signedInPage();
    await p.goto(`${base}/projects/${project.id}`);
    await p.waitForSelector('#live[data-state="on"]');
    expect(await p.locator('#waiting-hint').count()).toBe(0);

    for (const number of [1, 2]) {
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: `Deploy it (${number})`,
        kind: 'deploy',
      });
      await p.waitForSelector('#question');
      await p.waitForSelector('#waiting-hint');
      await expect(p.textContent('#waiting-hint')).resolves.toContain('The agent waits for this answer');
      if (number === 1) await screenshot(p, 'waiting', { docs: true });
      await p.check('#question input[value="production"]');
      await Promise.all([p.waitForURL(`${base}/projects/${project.id}`), p.click('[data-action="answer"]')]);
      await p.waitForSelector('#no-active');
      expect(await p.locator('#waiting-hint').count()).toBe(0);
      await p.waitForSelector(
        `#deployments > li.deploy:first-child h4:has-text("Deploy #${number}: web, ios, android")`,
      );
      expect(
        await p.$$eval('#deployments > li.deploy:first-child .deployment', (items) =>
          items.map((li) => `${li.getAttribute('data-platform')} #${li.getAttribute('data-deploy')}`),
        ),
      ).toEqual([`web #${number}`, `ios #${number}`, `android #${number}`]);
    }
    // The builder's message says the same number.
    await p.click('#messages > li.entry:first-child summary');
    await p.waitForSelector('#messages > li.entry:first-child li:has-text("Deploy #2: android published at")');
    await screenshot(p, 'deploys', { docs: true });
    await p.close();
  });

  it("shows times relative, with the exact time in the browser's time zone on hover, and exact UTC without script; serves a favicon", async (t) => {
    if (!browser) return t.skip();
    const p = await signedInPage();
    await p.goto(`${base}/projects`);
    const time = p.locator('#projects time').first();
    await expect(time.textContent()).resolves.toMatch(/^(just now|\d+ minutes? ago)$/);
    const iso = (await time.getAttribute('datetime'))!;
    // The browser is in New York: the hover text is that zone's wall time.
    const local = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      dateStyle: 'medium',
      timeStyle: 'long',
    }).format(new Date(iso));
    expect(local).toMatch(/E[SD]T$/);
    await expect(time.getAttribute('title')).resolves.toBe(local);
    await p.close();

    const plain = await browser!.newContext({ javaScriptEnabled: false, timezoneId: 'America/New_York' });
    try {
      const q = await plain.newPage();
      await q.goto(`${base}/signin`);
      await q.fill('#credential', token);
      await Promise.all([q.waitForURL(`${base}/projects`), q.click('#sign-in')]);
      const text = (await q.locator('#projects time').first().textContent())!;
      expect(text).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
      expect(text).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`);
    } finally {
      await plain.close();
    }

    const icon = await fetch(`${base}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect([...new Uint8Array(await icon.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]);
    const svg = await fetch(`${base}/console/favicon.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(await svg.text()).toContain('<svg');
    const signin = await (await fetch(`${base}/signin`)).text();
    expect(signin).toContain('<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">');
  });

  it("shows a refused create form's error next to its field and in view, however long the list; says when there is nothing to cancel", async (t) => {
    if (!browser) return t.skip();
    for (let i = 0; i < 25; i++)
      await createProject(server.mcpUrl, token, {
        name: `Filler ${i}`,
        description: 'A project that makes the list long',
      });
    const p = await signedInPage();
    await p.goto(`${base}/projects`);
    await p.fill('#name', '   ');
    const [refused] = await Promise.all([
      p.waitForResponse((r) => r.url() === `${base}/projects` && r.request().method() === 'POST'),
      p.click('#create'),
    ]);
    expect(refused.status()).toBe(400);
    const error = (await p.locator('#error').boundingBox())!;
    const field = (await p.locator('#name').boundingBox())!;
    // Right under the field, and on screen.
    expect(error.y).toBeGreaterThanOrEqual(field.y + field.height);
    expect(error.y - (field.y + field.height)).toBeLessThan(40);
    expect(error.y + error.height).toBeLessThanOrEqual(VIEWPORT.height);
    await expect(p.getAttribute('#name', 'aria-invalid')).resolves.toBe('true');
    await expect(p.evaluate(() => (globalThis as any).document.activeElement.id)).resolves.toBe('name');
    await screenshot(p, 'create-error');
    await p.close();

    // Nothing to cancel: the -32004 page says so (from error.data), not just "Resource not found".
    const project = await createProject(server.mcpUrl, token, { name: 'Idle' });
    const session = await rawSignIn(base, token);
    const res = await fetch(`${base}/projects/${project.id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie, Origin: base },
      body: new URLSearchParams({ csrf: session.csrf }).toString(),
    });
    expect(res.status).toBe(404);
    const page = await res.text();
    expect(page).toContain('-32004');
    expect(page).toContain('Nothing to cancel: no workflow of this project is running.');
  });
});
