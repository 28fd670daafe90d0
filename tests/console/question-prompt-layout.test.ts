/**
 * The pending question's prompt in the console's session panel, laid out by headless Chromium with
 * the console's own stylesheet (docs/console.md "Web console", "Code questions"): a code question's prompt
 * is a whole task of many lines (headings, file contents); it keeps its line breaks and scrolls
 * inside a bounded box instead of running into one paragraph that pushes the answer box and the
 * send form a few screens down. It is folded (details/summary) until the person opens it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSession } from '../../src/console/project-view.js';
import { launchChromium } from '../chromium.js';
import { ROOT } from '../helpers.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const at = '2026-11-22T09:30:00.000Z';
let browser: Browser | null;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('a code question in the session panel', () => {
  it("keeps the prompt's lines and bounds its height, so the answer box stays in view", async (ctx) => {
    if (!browser) return ctx.skip();
    const prompt = [
      'You are the code agent.',
      '## Rules',
      '- Write only App.tsx',
      '----- BEGIN App.tsx -----',
      ...Array.from({ length: 400 }, (_, i) => `const line${i} = ${i};`),
      '----- END App.tsx -----',
    ].join('\n');
    const workflow = {
      id: ID,
      kind: 'build' as const,
      title: 'Add a settings screen',
      status: 'waiting_for_input' as const,
      step: { index: 2, total: 5, name: 'Asking the host' },
      createdAt: at,
      startedAt: at,
      finishedAt: null,
      error: null,
      previewUrls: [],
      export: null,
    };
    const panel = renderSession(
      { projectId: ID, csrf: 'c' },
      {
        projectId: ID,
        hasActiveWorkflows: true,
        activeWorkflow: workflow,
        queuedWorkflows: [],
        previewUrls: [],
        lastWorkflow: null,
        deployments: [],
        checkpoints: [],
        environment: [],
        pendingQuestion: { questionId: ID, workflowId: ID, kind: 'code', prompt, maxLength: 240_000, askedAt: at },
      },
    ).value;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.setContent(
        `<!doctype html><html><head><style>${readFileSync(join(ROOT, 'assets/console/console.css'), 'utf8')}</style></head><body><main><div id="session">${panel}</div></main></body></html>`,
      );
      // Folded at first: the person opens it to read what the host's model gets.
      expect(await page.locator('#question .prompt').isVisible()).toBe(false);
      await page.click('#question .prompt-box summary');
      const promptBox = page.locator('#question .prompt');
      expect(await promptBox.evaluate((el) => (globalThis as any).getComputedStyle(el).whiteSpace)).toBe('pre-wrap');
      expect((await promptBox.innerText()).split('\n').length).toBeGreaterThan(400);
      const height = (await promptBox.boundingBox())!.height;
      expect(await promptBox.evaluate((el) => (el as any).scrollHeight as number)).toBeGreaterThan(height);
      expect((await page.locator('#question [data-action="skip"]').boundingBox())!.y).toBeLessThan(900);
    } finally {
      await page.close();
    }
  });
});
