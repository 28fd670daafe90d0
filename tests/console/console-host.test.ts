/**
 * The console says what it is, and a person can act on a code question (docs/console.md "Web console"),
 * in real headless Chromium against a real server, with a builder the test drives:
 * - the front page (sign-in, and the projects list) says the console follows and steers work that
 *   an MCP host does, with the lines that connect one to this server's /mcp;
 * - a code question shows as "waiting for code from your MCP host", with what to do, how to connect
 *   a host, the prompt folded until opened, and `skip` explained; Skip answers it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../chromium.js';
import { codeAnswerFormat, type CodeAnswerRules } from '../../src/builders/expo/code-answer.js';
import {
  bounded,
  createProject,
  ROOT,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  type TestServer,
} from '../helpers.js';
import { ManualBuilder } from '../manual-builder.js';
import { signedInPage } from './console-helpers.js';

let server: TestServer;
let builder: ManualBuilder;
let browser: Browser | null = null;
let context: BrowserContext;
let base: string;
let token: string;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
  base = server.mcpUrl.replace(/\/mcp$/, '');
  token = server.token('alice');
  browser = await launchChromium();
  if (browser) context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await browser?.close();
  await server.close();
});

/** The text of the front page's connect lines, opened. */
async function connectText(page: Page): Promise<string> {
  if (!(await page.locator('#connect').evaluate((el) => (el as any).open as boolean)))
    await page.click('#connect summary');
  return page.locator('#connect').innerText();
}

describe('the front page', () => {
  it('says the console follows and steers work that an MCP host does, with the lines to connect one', async (ctx) => {
    if (!browser) return ctx.skip();
    const page = await bounded('a new page', context.newPage());
    try {
      await page.goto(`${base}/signin`);
      const about = await page.locator('#about').innerText();
      expect(about).toMatch(/follows and steers the work an MCP host does/);
      const lines = await connectText(page);
      expect(lines).toContain(
        `claude mcp add --transport http mobile-builder ${server.mcpUrl} --header "Authorization: Bearer svc_..."`,
      );
      expect(lines).toContain(`"url": "${server.mcpUrl}"`);
    } finally {
      await bounded('closing the page', page.close());
    }
    // Signed in, the projects list says the same.
    const projects = await signedInPage(context, base, token);
    try {
      expect(await projects.locator('#about').innerText()).toMatch(/follows and steers the work an MCP host does/);
      expect(await connectText(projects)).toContain(server.mcpUrl);
    } finally {
      await bounded('closing the page', projects.close());
    }
  });
});

describe('a code question', () => {
  it('shows as waiting for code from the MCP host: what to do, how to connect, the prompt folded, and skip explained; Skip answers it', async (ctx) => {
    if (!browser) return ctx.skip();
    const project = await createProject(server.mcpUrl, token, { name: 'Habits' });
    const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Add a settings screen',
      kind: 'build',
    });
    const run = await waitFor(() => builder.runOf(sent.workflowId), 15_000, 'the run to start');
    run.step('Asking the host');
    // The expo builder's code question (its answer rules, over an app of one file).
    const root = tempDir('mbm-console-code-');
    writeFileSync(join(root, 'App.tsx'), 'export default function App() { return null; }\n');
    const rules: CodeAnswerRules = {
      root,
      packages: ['expo', 'react', 'react-native'],
      typescriptFrom: join(ROOT, 'node_modules'),
      maxFiles: 5,
      maxFileBytes: 100_000,
      maxTotalBytes: 150_000,
    };
    const prompt =
      'You are the code agent.\n## Task\nAdd a settings screen\n----- BEGIN App.tsx -----\nexport default function App() {}\n----- END App.tsx -----';
    run.ask('code_1', prompt, { kind: 'code', format: codeAnswerFormat(rules), maxLength: 240_000, rules });
    await waitFor(
      async () =>
        (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id })).pendingQuestion,
      15_000,
      'the code question',
    );

    const page = await signedInPage(context, base, token);
    try {
      await page.goto(`${base}/projects/${project.id}`);
      const box = page.locator('#question');
      expect(await box.locator('h3').innerText()).toBe('Waiting for code from your MCP host');
      const instruction = await box.locator('.instruction').innerText();
      expect(instruction).toContain('“Add a settings screen”');
      expect(instruction).toMatch(/ask its model to answer the pending code question/);
      // No answer box for a person: the prompt is folded, and opens on a click.
      expect(await box.locator('textarea, input[type="text"]').count()).toBe(0);
      expect(await box.locator('.prompt').isVisible()).toBe(false);
      await box.locator('.prompt-box summary').click();
      expect(await box.locator('.prompt').innerText()).toContain('You are the code agent.');
      await box.locator('.connect summary').click();
      expect(await box.locator('.connect').innerText()).toContain(
        `claude mcp add --transport http mobile-builder ${server.mcpUrl}`,
      );
      expect(await box.locator('#skip-hint').innerText()).toMatch(/skip.*goes on without the model's code/is);
      await box.locator('[data-action="skip"]').click();
      await waitFor(() => run.answers.length > 0, 15_000, 'the answer to reach the builder');
      expect(run.answers).toEqual(['skip']);
    } finally {
      await bounded('closing the page', page.close());
      run.finish();
    }
  });
});
