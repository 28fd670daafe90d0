/**
 * Vitest global set-up of the projects that run the built bin (`process`, `expo`): the bin loads
 * `dist/`, so a test after an edit in `src/` would test the old build. When any build input is
 * newer than the oldest build output, this runs `npm run build` first (about 10 s) and says so on
 * stderr; when the build fails, the run stops at once with the build's error.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npm run build` reads: the sources, the bundler script, its tsconfig and the locked dependencies. */
const BUILD_INPUTS = ['src', 'scripts/bundle.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** What it writes and the bin (or the package's `main`) loads. */
const BUILD_OUTPUTS = [
  'dist/index.js',
  'dist/mobile-builder-mcp.cjs',
  'dist/mobile-builder-oauth.cjs',
  'dist/mobile-builder-early.cjs',
];

/** Why `dist/` under `root` is stale, or null when it is current. */
export interface Staleness {
  /** The build input that is newer than the build, or the output that is missing (path from `root`). */
  path: string;
  reason: 'missing_output' | 'newer_input';
}

/**
 * Compares modification times: the newest file of the build inputs against the oldest build output.
 * @param root the repository root (holding `src/` and `dist/`)
 * @returns null when every output exists and none is older than an input
 */
export function distStaleness(root: string): Staleness | null {
  let oldestOutput = Infinity;
  for (const output of BUILD_OUTPUTS) {
    const mtime = mtimeOf(join(root, output));
    if (mtime === null) return { path: output, reason: 'missing_output' };
    oldestOutput = Math.min(oldestOutput, mtime);
  }
  const newest = newestFile(root, BUILD_INPUTS);
  return newest && newest.mtime > oldestOutput ? { path: newest.path, reason: 'newer_input' } : null;
}

/** Builds `dist/` under `root` when it is stale (see `distStaleness`). @throws Error when the build fails. */
export function ensureFreshDist(root: string): void {
  const stale = distStaleness(root);
  if (!stale) return;
  const shown = relative(process.cwd(), join(root, stale.path)) || stale.path;
  const why = stale.reason === 'missing_output' ? `${shown} is missing` : `${shown} is newer than dist/`;
  process.stderr.write(`[fresh-dist] ${why}: running npm run build before the tests that spawn the bin…\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', 'build', '--silent'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (build.status !== 0) {
    throw new Error(
      `dist/ is stale (${why}) and \`npm run build\` failed (${build.error?.message ?? `exit ${build.status}`}), so no test that spawns the bin can run:\n${build.stdout}${build.stderr}`,
    );
  }
  const still = distStaleness(root);
  if (still)
    throw new Error(
      `\`npm run build\` succeeded but dist/ is still stale (${still.path}): is a file under src/ dated in the future?`,
    );
}

/** Vitest `globalSetup` entry: the repository root is this file's grandparent. */
export default function setup(): void {
  ensureFreshDist(fileURLToPath(new URL('../..', import.meta.url)));
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** The most recently modified regular file among `paths` (files, or folders walked recursively). */
function newestFile(root: string, paths: readonly string[]): { path: string; mtime: number } | null {
  let newest: { path: string; mtime: number } | null = null;
  const visit = (path: string) => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if (stat.isFile() && (!newest || stat.mtimeMs > newest.mtime)) {
      newest = { path: relative(root, path), mtime: stat.mtimeMs };
    }
  };
  for (const path of paths) visit(join(root, path));
  return newest;
}
