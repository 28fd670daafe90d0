// One transform cache shared by every project of the service (SVC_METRO_CACHE_DIR, set by the
// service), so a new project's first build reuses the work of earlier ones.
const { getDefaultConfig } = require('expo/metro-config');
const { FileStore } = require('metro-cache');

const config = getDefaultConfig(__dirname);
if (process.env.SVC_METRO_CACHE_DIR) {
  config.cacheStores = [new FileStore({ root: process.env.SVC_METRO_CACHE_DIR })];
}
module.exports = config;
