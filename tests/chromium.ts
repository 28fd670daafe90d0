/**
 * Headless Debian Chromium for the browser tests, driven by playwright-core: installed with
 * apt-get when missing and the tests run as root, skipped with a loud message otherwise.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium, installing Debian's `chromium` first when it is missing and we are root.
 * @returns null (after a loud message) when no browser can be had; the caller skips.
 */
export async function launchChromium(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM) && process.getuid?.() === 0) {
    process.stderr.write('[chromium] /usr/bin/chromium is missing: installing it with apt-get (root)…\n');
    try {
      execFileSync('/bin/sh', ['-c', 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium'], {
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 600_000,
      });
    } catch (error) {
      process.stderr.write(`[chromium] apt-get install chromium failed: ${(error as Error).message}\n`);
    }
  }
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(
      "\n\n*** SKIPPING the browser checks: no /usr/bin/chromium and it cannot be installed here (not root). Install Debian's chromium to run them. ***\n\n",
    );
    return null;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
