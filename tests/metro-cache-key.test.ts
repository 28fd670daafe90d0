/**
 * The app template's metro.config.js (toolchains/template/metro.config.js, docs/builders.md): each
 * app config gets its own Metro transform cache inside the project's cache folder, and the native
 * identifiers a deploy writes into app.json (expo.ios.bundleIdentifier, expo.android.package) are
 * not part of that config: Expo inlines the public config only into web bundles, without its ios
 * and android sections, so a first deploy's web export reuses the previews' cache. The file runs
 * here as Metro would load it, with stand-ins for the two Expo modules it requires (this test
 * checks which cache folder it names, not Expo).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, expect, it } from 'vitest';

const TEMPLATE = join(dirname(fileURLToPath(import.meta.url)), '..', 'toolchains', 'template', 'metro.config.js');

let app: string;
let cache: string;

beforeEach(() => {
  app = mkdtempSync(join(tmpdir(), 'metro-key-app-'));
  cache = mkdtempSync(join(tmpdir(), 'metro-key-cache-'));
  writeFileSync(join(app, 'package.json'), '{"name":"app","main":"expo-router/entry"}\n');
});

afterEach(() => {
  rmSync(app, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
});

/** The cache folder the template names for `appJson` (written as app.json, as the service writes it). */
function cacheFolderFor(appJson: unknown, env: Record<string, string> = {}): string {
  writeFileSync(join(app, 'app.json'), `${JSON.stringify(appJson, null, 2)}\n`);
  const roots: string[] = [];
  const realRequire = createRequire(join(app, 'metro.config.js'));
  const stubs: Record<string, unknown> = {
    'expo/metro-config': { getDefaultConfig: () => ({ transformer: {}, resolver: {} }) },
    'metro-cache': {
      FileStore: class {
        constructor({ root }: { root: string }) {
          roots.push(root);
        }
      },
    },
  };
  const module = { exports: {} as unknown };
  runInNewContext(`(function (require, module, __dirname) {${readFileSync(TEMPLATE, 'utf8')}\n})`, {
    process: { env: { SVC_METRO_CACHE_DIR: cache, ...env } },
  })((name: string) => stubs[name] ?? realRequire(name), module, app);
  expect(roots).toHaveLength(1);
  expect(dirname(roots[0]!)).toBe(cache);
  return roots[0]!;
}

const PREVIEW = {
  expo: {
    name: 'Tip Calculator',
    slug: 'tip-calculator',
    ios: { supportsTablet: true },
    experiments: { baseUrl: '.' },
  },
};
const DEPLOYED = {
  expo: {
    ...PREVIEW.expo,
    ios: { supportsTablet: true, bundleIdentifier: 'com.example.tips' },
    android: { package: 'com.example.tips' },
  },
};

it("keeps one cache across a deploy's native identifiers, and a new one for any other change", () => {
  const preview = cacheFolderFor(PREVIEW);
  expect(cacheFolderFor(DEPLOYED)).toBe(preview);
  // Another identifier: still the same cache.
  expect(
    cacheFolderFor({
      expo: { ...DEPLOYED.expo, ios: { supportsTablet: true, bundleIdentifier: 'com.example.other' } },
    }),
  ).toBe(cacheFolderFor({ expo: { ...DEPLOYED.expo, ios: { supportsTablet: true } } }));
  // What Expo inlines into a web bundle is a new cache: the name, another ios field, a public variable.
  expect(cacheFolderFor({ expo: { ...DEPLOYED.expo, name: 'Tips' } })).not.toBe(preview);
  expect(cacheFolderFor({ expo: { ...PREVIEW.expo, ios: { supportsTablet: false } } })).not.toBe(preview);
  expect(cacheFolderFor(PREVIEW, { EXPO_PUBLIC_API: 'https://api.example.com' })).not.toBe(preview);
});
