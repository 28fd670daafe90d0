// Bundles the built CLI (dist/cli/main.js and everything it imports, dependencies included) into
// one CommonJS file, dist/mobile-builder-mcp.cjs, that bin/mobile-builder-mcp.js loads. A stdio
// server is launched by every MCP host at start-up, and resolving and linking a few hundred ES
// modules was most of its start-up time (README "Start-up time"). better-sqlite3 stays external
// (a native addon). `import.meta.url` of each bundled file is replaced by that file's own URL
// under dist/, so paths relative to it (package.json, drizzle/) resolve as they do unbundled.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
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

await build({
  entryPoints: [join(dist, 'cli', 'main.js')],
  outfile: join(dist, 'mobile-builder-mcp.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['better-sqlite3'],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [importMetaUrl],
});
