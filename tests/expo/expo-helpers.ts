/**
 * Helpers of the toolchain tests: the real Expo SDK toolchains (58 and 54), installed once into
 * `.cache/expo-toolchain` (git-ignored, reused between runs), and headless Debian Chromium driven
 * by playwright-core.
 */
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { toolchainsFor } from '../../src/builders/expo/index.js';
import type { AppConfig } from '../../src/app.js';
import { ROOT, startTestServer, tempDir, type TestServer } from '../helpers.js';

export { launchChromium } from '../chromium.js';

/** Where the tests keep the installed toolchain between runs. */
export const TOOLCHAINS_CACHE = join(ROOT, '.cache', 'expo-toolchain');
/** Where the tests keep Metro's transform cache between runs. */
const METRO_CACHE = join(ROOT, '.cache', 'expo-metro');

/** Installs every served SDK's toolchain into the cache folder unless it is there (about 1-2 min each the first time). */
export async function ensureToolchain(): Promise<void> {
  for (const toolchain of toolchainsFor({ dataDir: tempDir(), toolchainsDir: TOOLCHAINS_CACHE })) {
    await toolchain.ensure({ onProgress: (text: string) => process.stderr.write(`[toolchain] ${text}\n`) });
  }
}

/**
 * A server with the `expo` builder on the cached toolchain; its agent is `none` (deterministic
 * edits) unless `expo` names one or gives an agent command.
 */
export function startExpoServer(
  expo: NonNullable<AppConfig['expo']> = {},
  config: Partial<AppConfig> = {},
): Promise<TestServer> {
  return startTestServer({
    builder: 'expo',
    expo: {
      toolchainsDir: TOOLCHAINS_CACHE,
      metroCacheDir: METRO_CACHE,
      installToolchain: false,
      agent: expo.agentCommand ? 'command' : 'none',
      ...expo,
    },
    ...config,
  });
}

/** The body text of a page once `text` shows up in it (the app renders client-side). */
export async function pageText(browser: Browser, url: string, text: string): Promise<string> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  try {
    await page.goto(url, { waitUntil: 'load' });
    try {
      await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, undefined, {
        timeout: 30_000,
      });
    } catch (error) {
      throw new Error(
        `"${text}" never appeared at ${url}. Page errors: ${errors.join(' | ') || 'none'}. Body: ${await page.evaluate<string>('document.body.innerText')}`,
        { cause: error },
      );
    }
    return await page.evaluate<string>('document.body.innerText');
  } finally {
    await page.close();
  }
}
