// Managed by mobile-builder-mcp: rewritten before every build (changes to it are not kept).
//
// - A transform cache in this project's own cache folder (SVC_METRO_CACHE_DIR, set by the
//   service; the build sandbox shows an export no other project's), one per app config inside it:
//   Expo inlines the app's public config (name, slug, ...) into modules such as expo-constants,
//   and Metro's cache key does not cover app.json, so configs never share transformed output.
//   Rebuilds of one app reuse its own. The same for the project's EXPO_PUBLIC_* variables
//   (inlined too). The native identifiers a deploy writes (expo.ios.bundleIdentifier,
//   expo.android.package) are left out of the key: Expo inlines the config only into web
//   bundles, and removes its ios and android sections first, so a first deploy's web export
//   reuses the previews' cache.
// - No file outside this app and its toolchain enters a bundle: every resolved module and asset
//   is checked after links are resolved (a package subpath with "..", an absolute path through a
//   package), and require.context (which lists folders) is off.
const fs = require('fs');
const path = require('path');
const { getDefaultConfig } = require('expo/metro-config');
const { FileStore } = require('metro-cache');

const config = getDefaultConfig(__dirname);

/** app.json's text as JSON without expo.ios.bundleIdentifier and expo.android.package (a section left empty goes too); other text as it is. */
function withoutNativeIdentifiers(text) {
  let app;
  try {
    app = JSON.parse(text);
  } catch {
    return text;
  }
  const expo = app && app.expo;
  if (!expo || typeof expo !== 'object') return text;
  for (const [section, key] of [['ios', 'bundleIdentifier'], ['android', 'package']]) {
    const value = expo[section];
    if (!value || typeof value !== 'object' || !(key in value)) continue;
    delete value[key];
    if (Object.keys(value).length === 0) delete expo[section];
  }
  return JSON.stringify(app);
}
if (process.env.SVC_METRO_CACHE_DIR) {
  // Everything Expo reads the app's config from (a missing file counts as empty).
  const configHash = require('crypto').createHash('sha256');
  for (const name of ['app.json', 'app.config.js', 'app.config.ts', 'app.config.json', 'package.json']) {
    let text = '';
    try {
      text = fs.readFileSync(path.join(__dirname, name), 'utf8');
    } catch {}
    configHash.update(`${name}\0${name === 'app.json' ? withoutNativeIdentifiers(text) : text}\0`);
  }
  // The project's EXPO_PUBLIC_* variables, which Expo inlines into modules: a changed value is a new cache.
  for (const name of Object.keys(process.env).filter((n) => n.startsWith('EXPO_PUBLIC_')).sort()) {
    configHash.update(`env:${name}\0${process.env[name]}\0`);
  }
  const root = path.join(process.env.SVC_METRO_CACHE_DIR, `config-${configHash.digest('hex').slice(0, 24)}`);
  config.cacheStores = [new FileStore({ root })];
}

config.transformer = { ...config.transformer, unstable_allowRequireContext: false };

const realRoot = (dir) => {
  try {
    return fs.realpathSync(dir);
  } catch {
    return null;
  }
};
const workspace = realRoot(__dirname);
const toolchainModules = realRoot(path.join(__dirname, 'node_modules'));
const allowed = [workspace, toolchainModules && path.dirname(toolchainModules)].filter(Boolean);

function inside(file) {
  if (typeof file !== 'string' || !path.isAbsolute(file)) return true; // virtual modules
  const real = realRoot(file);
  if (real === null) return false;
  return allowed.some((root) => real === root || real.startsWith(root + path.sep));
}

const upstream = config.resolver.resolveRequest;
config.resolver.resolveRequest = (context, moduleName, platform) => {
  const resolution = (upstream ?? context.resolveRequest)(context, moduleName, platform);
  const files = resolution.type === 'sourceFile' ? [resolution.filePath] : resolution.type === 'assetFiles' ? resolution.filePaths : [];
  for (const file of files) {
    if (!inside(file)) {
      throw new Error(`Refused to bundle "${moduleName}" (imported by ${path.relative(__dirname, context.originModulePath)}): it resolves outside the app and its toolchain`);
    }
  }
  return resolution;
};

module.exports = config;
