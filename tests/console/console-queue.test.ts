/**
 * The web console in real headless Chromium with the `command` builder (docs/builders.md "Builders"), whose
 * commands wait on states the test controls, so nothing depends on timing:
 * - the queue: a build held at a gate (a file the test creates) stays active, a build sent from
 *   the console queues behind it and a second open page shows the queue live (no reload);
 *   cancelling the queued build from the console leaves the active one running; opening the gate
 *   lets the active build and the build queued after it settle, followed live;
 * - a question with options: the answer box offers exactly those options, and a choice is
 *   accepted and the workflow goes on.
 *
 * A workflow queues only behind a running one: while a question is pending, every message of the
 * project is taken as its answer (docs/contract.md "Tools"), so the held build is running, not waiting.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../../src/builders/process-sandbox.js';
import { launchChromium } from '../chromium.js';
import { createProject, startTestServer, tempDir, toolResult, waitFor, type TestServer } from '../helpers.js';
import { signedInPage as signedInConsolePage, screenshot } from './console-helpers.js';

let server: TestServer;
let browser: Browser | null = null;
let base: string;
let token: string;
let context: BrowserContext;
/** The gate: a build whose instruction says `hold` waits until this file exists. */
let gate: string;

beforeAll(async () => {
  const dir = tempDir('mbm-console-queue-');
  gate = join(dir, 'gate-open');
  const build = [
    'echo "::step 1/2 Waiting at the gate"',
    `case "$SVC_INSTRUCTION" in *hold*) while [ ! -e '${gate}' ]; do sleep 0.05; done;; esac`,
    'echo "::step 2/2 Finishing"',
    'echo "::result built: $SVC_INSTRUCTION"',
  ].join('\n');
  const deploy = [
    'echo "::step 1/2 Choosing the channel"',
    'echo \'::ask channel {"prompt":"Which release channel?","options":["beta","production","<i>nightly</i>"]}\'',
    'read answer',
    'echo "::step 2/2 Publishing"',
    'echo "::result deployed to $answer"',
  ].join('\n');
  const file = join(dir, 'builder.json');
  writeFileSync(file, JSON.stringify({ build: { command: build }, deploy: { command: deploy } }));
  // Unsandboxed: the gate is a file outside the workspace that the test creates while the build runs.
  server = await startTestServer({
    builder: 'command',
    builderConfigFile: file,
    cancelTimeoutMs: 10_000,
    buildSandbox: SANDBOX_TURNED_OFF,
  });
  base = server.http.url;
  token = server.token('carol');
  browser = await launchChromium();
  if (browser) context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  if (gate && !existsSync(gate)) writeFileSync(gate, '');
  await browser?.close();
  await server?.close();
});

/** A page of `context`, signed in with the test's token. */
const signedInPage = (): Promise<Page> => signedInConsolePage(context, base, token);

/** Opens the project page and waits until its event stream is connected. */
async function openLive(p: Page, projectId: string): Promise<void> {
  await p.goto(`${base}/projects/${projectId}`);
  await p.waitForSelector('#live[data-state="on"]');
  await p.evaluate(() => ((globalThis as any).marker = 'not reloaded'));
}

describe('web console in Chromium: queue and option questions', () => {
  it('shows a build queued behind a running one live, cancels it from the console, and follows both settling', async (t) => {
    if (!browser) return t.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Queue app' });
    const sender = await signedInPage();
    const watcher = await signedInPage();
    await openLive(watcher, project.id);

    // Held at the gate: active and running, step 1 of 2, shown live on the watching page.
    const held = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build and hold',
      kind: 'build',
    });
    await watcher.waitForSelector(`#active-workflow[data-workflow-id="${held.workflowId}"][data-status="running"]`);
    await watcher.waitForSelector('#active-workflow .step:has-text("Step 1/2: Waiting at the gate")');

    // A build sent from the console (another page) queues behind it; the watching page shows it without reloading.
    await sender.goto(`${base}/projects/${project.id}`);
    await sender.fill('#message', 'Queued then cancelled');
    await sender.check('input[name="kind"][value="build"]');
    await Promise.all([sender.waitForURL(`${base}/projects/${project.id}`), sender.click('#send-button')]);
    await sender.waitForSelector('#queue li');
    const queuedId = await sender.getAttribute('#queue li', 'data-workflow-id');
    await watcher.waitForSelector(`#queue li[data-workflow-id="${queuedId}"][data-status="queued"]`);
    // And one more, sent by an MCP client elsewhere.
    const later = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build after the gate',
      kind: 'build',
    });
    expect(later.status).toBe('queued');
    await watcher.waitForSelector(`#queue li[data-workflow-id="${later.workflowId}"]`);
    expect(
      await watcher.$$eval('#queue li', (items) => items.map((li) => li.getAttribute('data-workflow-id'))),
    ).toEqual([queuedId, later.workflowId]);
    expect(await watcher.evaluate(() => (globalThis as any).marker)).toBe('not reloaded');
    await screenshot(watcher, 'queue', { docs: true });

    // The projects list shows each project's state (rendered when the page is read).
    const idle = await createProject(server.mcpUrl, token, { name: 'Idle app' });
    const list = await signedInPage();
    const badge = (id: string) => list.textContent(`[data-project-id="${id}"] .state`);
    await expect(badge(project.id)).resolves.toBe('running: build step 1/2 · 2 queued');
    expect(await list.getAttribute(`[data-project-id="${project.id}"] .state`, 'data-state')).toBe('running');
    await expect(badge(idle.id)).resolves.toBe('idle');
    await screenshot(list, 'projects-states', { docs: true });
    await list.close();
    // The one read behind the badges is by owner: another user's list learns nothing of these.
    const mine = await server.app.workflows.ownProjectStates(await server.app.tokens.authenticate(token));
    expect(mine.get(project.id)).toEqual({
      active: { kind: 'build', status: 'running', step: { index: 1, total: 2, name: 'Waiting at the gate' } },
      queued: 2,
    });
    expect(
      (await server.app.workflows.ownProjectStates(await server.app.tokens.authenticate(server.token('dave')))).size,
    ).toBe(0);

    // Cancelling the first queued build from the console: it leaves the queue; the held build keeps running.
    await Promise.all([
      watcher.waitForURL(`${base}/projects/${project.id}`),
      watcher.click(`#queue li[data-workflow-id="${queuedId}"] [data-action="cancel"]`),
    ]);
    await watcher.waitForSelector('#live[data-state="on"]');
    await watcher.evaluate(() => ((globalThis as any).marker = 'not reloaded'));
    await watcher.waitForSelector(`#queue li[data-workflow-id="${queuedId}"]`, { state: 'detached' });
    expect(
      await watcher.$$eval('#queue li', (items) => items.map((li) => li.getAttribute('data-workflow-id'))),
    ).toEqual([later.workflowId]);
    await watcher.waitForSelector(`#active-workflow[data-workflow-id="${held.workflowId}"][data-status="running"]`);
    const during = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(during.activeWorkflow).toMatchObject({ id: held.workflowId, status: 'running' });
    expect(during.queuedWorkflows.map((w: { id: string }) => w.id)).toEqual([later.workflowId]);
    // The sending page, still open, sees the cancel live too.
    await sender.waitForSelector(`#queue li[data-workflow-id="${queuedId}"]`, { state: 'detached' });

    // Opening the gate: the held build finishes, the queued one runs, both followed live.
    writeFileSync(gate, '');
    await watcher.waitForSelector(`#last-workflow[data-workflow-id="${later.workflowId}"][data-status="completed"]`);
    await watcher.waitForSelector('#no-active');
    // Each build is one folded entry of the conversation; its lines are in the page, shown on a click.
    await watcher.waitForSelector('#messages li[data-type="result"]:has-text("built: Build and hold")', {
      state: 'attached',
    });
    await watcher.waitForSelector('#messages li[data-type="result"]:has-text("built: Build after the gate")', {
      state: 'attached',
    });
    expect(await watcher.$('#queue')).toBeNull();
    expect(await watcher.evaluate(() => (globalThis as any).marker)).toBe('not reloaded');
    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    expect(messages.some((m: { content: string }) => m.content === 'built: Queued then cancelled')).toBe(false);
    await sender.close();
    await watcher.close();
  });

  it('offers exactly the options of a question, and a choice lets the workflow go on', async (t) => {
    if (!browser) return t.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Options app' });
    const p = await signedInPage();
    await openLive(p, project.id);
    await p.fill('#message', 'Release it');
    await p.check('input[name="kind"][value="deploy"]');
    await Promise.all([p.waitForURL(`${base}/projects/${project.id}`), p.click('#send-button')]);
    await p.waitForSelector('#question');
    await p.waitForSelector('#active-workflow[data-status="waiting_for_input"]');
    await expect(p.textContent('#question .prompt')).resolves.toBe('Which release channel?');
    const list = await signedInPage();
    await expect(list.textContent(`[data-project-id="${project.id}"] .state`)).resolves.toBe('waiting for input');
    await list.close();
    // Exactly the options, in order, as required radio buttons (the option text is escaped, not markup).
    const offered = await p.$$eval('#question input[name="message"]', (inputs) =>
      inputs.map((i) => ({
        type: i.getAttribute('type'),
        value: i.getAttribute('value'),
        required: i.hasAttribute('required'),
      })),
    );
    expect(offered).toEqual(
      ['beta', 'production', '<i>nightly</i>'].map((value) => ({ type: 'radio', value, required: true })),
    );
    expect(await p.$$('#question i')).toHaveLength(0);
    expect(await p.$('#question input[type="text"], #question textarea')).toBeNull();
    await screenshot(p, 'options');

    await p.check('#question input[name="message"][value="production"]');
    await Promise.all([p.waitForURL(`${base}/projects/${project.id}`), p.click('[data-action="answer"]')]);
    await p.waitForSelector('#last-workflow[data-status="completed"]');
    await p.waitForSelector('#messages li[data-type="result"]:has-text("deployed to production")', {
      state: 'attached',
    });
    expect(await p.$('#question')).toBeNull();
    const done = await waitFor(
      async () => {
        const s = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
        return s.hasActiveWorkflows ? null : s;
      },
      10_000,
      'the deploy to finish',
    );
    expect(done.lastWorkflow).toMatchObject({
      kind: 'deploy',
      status: 'completed',
      step: { index: 2, total: 2, name: 'Publishing' },
    });
    await p.close();
  });
});
