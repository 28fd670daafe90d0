// Managed by mobile-builder-mcp: rewritten before every build (changes to it are not kept).
//
// - One transform cache shared by every project of the service (SVC_METRO_CACHE_DIR, set by the
//   service), so a new project's first build reuses the work of earlier ones.
// - No file outside this app and its toolchain enters a bundle: every resolved module and asset
//   is checked after links are resolved (a package subpath with "..", an absolute path through a
//   package), and require.context (which lists folders) is off.
const fs = require('fs');
const path = require('path');
const { getDefaultConfig } = require('expo/metro-config');
const { FileStore } = require('metro-cache');

const config = getDefaultConfig(__dirname);
if (process.env.SVC_METRO_CACHE_DIR) {
  config.cacheStores = [new FileStore({ root: process.env.SVC_METRO_CACHE_DIR })];
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
