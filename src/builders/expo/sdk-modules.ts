/**
 * Whether a package import of a code answer exists in every Expo SDK the server serves: an answer
 * that builds with the first SDK's toolchain must also export with the others (a deploy exports
 * native bundles for each), so a module only one SDK ships is refused before anything is applied.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** One served SDK's installed packages. */
export interface SdkModules {
  sdk: number;
  /** The SDK toolchain's `node_modules` (absolute). */
  nodeModules: string;
}

/** File endings Metro resolves for a React Native app (platform files first, as Metro tries them). */
const ENDINGS = [
  '',
  '.ts',
  '.tsx',
  '.js',
  '.jsx',
  '.json',
  '.native.js',
  '.ios.js',
  '.android.js',
  '.web.js',
  '.native.ts',
  '.ios.ts',
  '.android.ts',
  '.web.ts',
  '.native.tsx',
  '.ios.tsx',
  '.android.tsx',
  '.web.tsx',
  '.d.ts',
];

/**
 * True when the package specifier (`expo-status-bar`, `react-native/Libraries/x`) resolves in the
 * `node_modules` folder: through the package's `exports` (Node's resolution), else as a file or a
 * folder index with any ending Metro tries.
 */
export function resolvesIn(nodeModules: string, specifier: string): boolean {
  try {
    createRequire(join(nodeModules, '..', 'resolve-probe.js')).resolve(specifier);
    return true;
  } catch {
    // Not resolvable by Node (an ESM-only export, a platform file): look for the file.
  }
  const base = join(nodeModules, specifier);
  for (const ending of ENDINGS) {
    const file = `${base}${ending}`;
    if (ending === '' ? isDirectoryWithEntry(file) : existsSync(file)) return true;
  }
  return false;
}

function isDirectoryWithEntry(dir: string): boolean {
  try {
    if (!statSync(dir).isDirectory()) return false;
  } catch {
    return false;
  }
  return (
    existsSync(join(dir, 'package.json')) || ENDINGS.slice(1).some((ending) => existsSync(join(dir, `index${ending}`)))
  );
}

/**
 * The SDKs (of `served`) in which the package specifier does not resolve; empty when every SDK
 * has it. An SDK whose toolchain is not installed here is not judged (the type check and the
 * export on its own toolchain are).
 */
export function sdksMissing(served: readonly SdkModules[], specifier: string): number[] {
  return served.filter((s) => existsSync(s.nodeModules) && !resolvesIn(s.nodeModules, specifier)).map((s) => s.sdk);
}
