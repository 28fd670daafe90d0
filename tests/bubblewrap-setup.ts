/**
 * Vitest global set-up: every build process runs in bubblewrap, so the tests install Debian's
 * `bubblewrap` with apt-get when `bwrap` is missing and they run as root (as `tests/chromium.ts`
 * does for Chromium); otherwise they say loudly that the sandbox tests will fail.
 */
import { execFileSync, spawnSync } from 'node:child_process';

/** Installs bubblewrap when missing (root only). */
export default function setup(): void {
  if (spawnSync('/bin/sh', ['-c', 'command -v bwrap'], { stdio: 'ignore' }).status === 0) return;
  if (process.getuid?.() === 0) {
    process.stderr.write('[bubblewrap] bwrap is missing: installing bubblewrap with apt-get (root)…\n');
    try {
      execFileSync(
        '/bin/sh',
        ['-c', 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap'],
        { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 },
      );
      return;
    } catch (error) {
      process.stderr.write(`[bubblewrap] apt-get install bubblewrap failed: ${(error as Error).message}\n`);
    }
  }
  process.stderr.write(
    "\n\n*** bwrap (bubblewrap) is not installed and cannot be installed here (not root): the build sandbox tests will fail. Install Debian's bubblewrap. ***\n\n",
  );
}
