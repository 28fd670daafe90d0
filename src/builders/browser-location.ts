/**
 * Which browser renders preview screenshots (docs/hosts.md "Screenshots"): `--browser PATH` /
 * `SVC_BROWSER` when given (a path that names no file means no browser: there is no fallback, so
 * an operator can turn screenshots off), else Debian's `/usr/bin/chromium`, else the first
 * Chrome or Chromium found on `PATH`.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Names looked up on `PATH` when no browser is configured, in order. */
const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];
/** Debian's package puts its launcher here. */
const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** The browser found, or why there is none (a sentence for `structuredContent.screenshot.reason`). */
export type BrowserLocation = { path: string; problem: null } | { path: null; problem: string };

/**
 * Finds the browser once (at start-up). Never throws: a missing browser only disables screenshots.
 * @param configured `--browser` / `SVC_BROWSER`, if set.
 * @param searchPath the `PATH` to search (default the process's).
 */
export function locateBrowser(configured: string | undefined, searchPath = process.env.PATH ?? ''): BrowserLocation {
  if (configured !== undefined && configured !== '') {
    return executable(configured)
      ? { path: configured, problem: null }
      : { path: null, problem: 'the browser configured with --browser (SVC_BROWSER) is not an executable file' };
  }
  if (executable(DEBIAN_CHROMIUM)) return { path: DEBIAN_CHROMIUM, problem: null };
  for (const dir of searchPath.split(delimiter).filter(Boolean)) {
    for (const name of PATH_NAMES) {
      const candidate = join(dir, name);
      if (executable(candidate)) return { path: candidate, problem: null };
    }
  }
  return { path: null, problem: 'no browser on the server: install Chromium or pass --browser PATH' };
}

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
