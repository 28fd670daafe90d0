// Bundles the built CLI (dist/cli/main.js and everything it imports, dependencies included) into
// one CommonJS file, dist/mobile-builder-mcp.cjs, that bin/mobile-builder-mcp.js loads. A stdio
// server is launched by every MCP host at start-up, and resolving and linking a few hundred ES
// modules was most of its start-up time (README "Start-up time"). better-sqlite3 stays external
// (a native addon). `import.meta.url` of each bundled file is replaced by that file's own URL
// under dist/, so paths relative to it (package.json, drizzle/) resolve as they do unbundled.
// The OAuth routes (express and the SDK's authorization server) are a second bundle,
// dist/mobile-builder-oauth.cjs, that the HTTP transport requires only when it serves /mcp: the
// stdio server never reads them (README "Sign in with OAuth"). The MCP 2026-07-28 era (the v2 SDK) is
// a third, dist/mobile-builder-modern.cjs, required on the first request of that era only.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** Rewrites `import.meta.url` in our own built files to their original location. */
const importMetaUrl = {
  name: 'import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const rel = JSON.stringify(relative(dist, args.path).split('\\').join('/'));
      return { contents: source.replaceAll('import.meta.url', `require('node:url').pathToFileURL(require('node:path').join(__dirname, ${rel})).href`), loader: 'js' };
    });
  },
};

/** The transport's `import('../oauth/oauth-routes.js')` becomes a require of the OAuth bundle beside this one. */
const oauthApart = {
  name: 'oauth-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]oauth[\\/]oauth-routes\.js$/ }, () => ({ path: './mobile-builder-oauth.cjs', external: true }));
  },
};

/** `import('./modern-era.js')` becomes a require of the 2026-07-28 era's bundle beside this one. */
const modernApart = {
  name: 'modern-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]?modern-era\.js$/ }, (args) => (args.importer.endsWith('mcp-server.js') && args.kind === 'dynamic-import' ? { path: './mobile-builder-modern.cjs', external: true } : undefined));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['better-sqlite3'],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
};

const stdio = await build({
  ...common,
  entryPoints: [join(dist, 'cli', 'main.js')],
  outfile: join(dist, 'mobile-builder-mcp.cjs'),
  // import() of the OAuth bundle as require(): the bin runs this bundle as a script, where import() is not available.
  supported: { 'dynamic-import': false },
  plugins: [importMetaUrl, oauthApart, modernApart],
  write: false,
});
// The first line names the build (a hash of the bundle): the bin keys its V8 code cache by it.
const code = stdio.outputFiles[0].contents;
await writeFile(join(dist, 'mobile-builder-mcp.cjs'), Buffer.concat([Buffer.from(`//build:${createHash('sha256').update(code).digest('hex').slice(0, 16)}\n`), code]));

await build({
  ...common,
  entryPoints: [join(dist, 'mcp', 'modern-era.js')],
  outfile: join(dist, 'mobile-builder-modern.cjs'),
  plugins: [importMetaUrl],
});

await build({
  ...common,
  entryPoints: [join(dist, 'oauth', 'oauth-routes.js')],
  outfile: join(dist, 'mobile-builder-oauth.cjs'),
  plugins: [importMetaUrl],
});
