// Bundles the built CLI (dist/cli/main.js and everything it imports, dependencies included) into
// one CommonJS file, dist/mobile-builder-mcp.cjs, that bin/mobile-builder-mcp.js loads. A stdio
// server is launched by every MCP host at start-up, and resolving and linking a few hundred ES
// modules was most of its start-up time (docs/performance.md "Start-up time"). better-sqlite3 stays external
// (a native addon). `import.meta.url` of each bundled file is replaced by that file's own URL
// under dist/, so paths relative to it (package.json, drizzle/) resolve as they do unbundled.
// The OAuth routes (express and the SDK's authorization server) are a second bundle,
// dist/mobile-builder-oauth.cjs, that the HTTP transport requires only when it serves /mcp: the
// stdio server never reads them (docs/security.md "Sign in with OAuth"). The MCP 2026-07-28 era (the v2 SDK) is
// a third, dist/mobile-builder-modern.cjs, required on the first request of that era only.
// A plain stdio `serve` starts with a fourth, dist/mobile-builder-early.cjs (a few KiB, Node's
// built-ins only): it answers the first `initialize` before the bin loads the main bundle
// (src/cli/early-stdio-start.ts, docs/performance.md "Start-up time").
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
      return {
        contents: source.replaceAll(
          'import.meta.url',
          `require('node:url').pathToFileURL(require('node:path').join(__dirname, ${rel})).href`,
        ),
        loader: 'js',
      };
    });
  },
};

/** The transport's `import('../oauth/oauth-routes.js')` becomes a require of the OAuth bundle beside this one. */
const oauthApart = {
  name: 'oauth-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]oauth[\\/]oauth-routes\.js$/ }, () => ({
      path: './mobile-builder-oauth.cjs',
      external: true,
    }));
  },
};

/** `import('./modern-era.js')` becomes a require of the 2026-07-28 era's bundle beside this one. */
const modernApart = {
  name: 'modern-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]?modern-era\.js$/ }, (args) =>
      args.importer.endsWith('mcp-server.js') && args.kind === 'dynamic-import'
        ? { path: './mobile-builder-modern.cjs', external: true }
        : undefined,
    );
  },
};

/**
 * The SDK's `Server` imports its default JSON Schema validator (Ajv) and constructs it only when it
 * is given none; ours is always given one (src/mcp/form-answer-validator.ts), so the import is
 * replaced by a class that throws if it were ever constructed, and Ajv stays out of the bundle.
 */
const noAjv = {
  name: 'no-ajv',
  setup(b) {
    b.onResolve({ filter: /[\\/]validation[\\/]ajv-provider\.js$/ }, (args) =>
      /@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]server[\\/]/.test(args.importer)
        ? { path: 'ajv-provider', namespace: 'no-ajv' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-ajv' }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { constructor() { throw new Error('mobile-builder-mcp passes its own jsonSchemaValidator to the SDK Server'); } }",
      loader: 'js',
    }));
  },
};

/**
 * rate-limiter-flexible's index loads every limiter it has (Redis, Mongo, Postgres...); we use the
 * in-memory one and its result class (src/limits/request-rate-limiter.ts), and the PostgreSQL one
 * on a PostgreSQL store (src/limits/pg-rate-limiter.ts), so the package's name resolves to those
 * three files, the PostgreSQL one loaded on first use only (a getter: a SQLite or stdio start never
 * evaluates it).
 */
const memoryLimiterOnly = {
  name: 'memory-limiter-only',
  setup(b) {
    b.onResolve({ filter: /^rate-limiter-flexible$/ }, () => ({
      path: 'rate-limiter-flexible',
      namespace: 'memory-limiter-only',
    }));
    b.onLoad({ filter: /.*/, namespace: 'memory-limiter-only' }, () => ({
      contents:
        "module.exports = { RateLimiterMemory: require('rate-limiter-flexible/lib/RateLimiterMemory.js'), RateLimiterRes: require('rate-limiter-flexible/lib/RateLimiterRes.js'), get RateLimiterPostgres() { return require('rate-limiter-flexible/lib/RateLimiterPostgres.js'); } };",
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * zod's namespace (`z.locales`) carries its 60-odd error-message locales, all evaluated at load;
 * this server speaks English (zod's default, which its schemas import directly) and configures no
 * other. In the stdio bundle each other locale is a function that throws, naming itself.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, async (args) => {
      const names = [...(await readFile(args.path, 'utf8')).matchAll(/default as (\w+)/g)]
        .map((m) => m[1])
        .filter((name) => name !== 'en');
      const leftOut = names.map(
        (name) =>
          `export const ${name} = () => { throw new Error('zod locale ${name} is left out of the mobile-builder-mcp bundle'); };`,
      );
      return { contents: [`export { default as en } from './en.js';`, ...leftOut].join('\n'), loader: 'js' };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // pg-native: node-postgres's optional native binding, required only by `pg.native`, which we never use.
  external: ['better-sqlite3', 'pg-native'],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

/**
 * Size and module count of each bundle, for `npm run bench` (dist/bundle-stats.json); with
 * `listInputs`, the bundle's modules too (the early bundle's: tests check what it holds).
 */
const stats = {};
function record(label, result, file, listInputs = false) {
  const output = Object.values(result.metafile.outputs)[0];
  const packages = new Set(
    Object.keys(output.inputs).flatMap(
      (input) => /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(input)?.[1] ?? [],
    ),
  );
  stats[label] = {
    file,
    bytes: output.bytes,
    modules: Object.keys(output.inputs).length,
    packages: [...packages].sort(),
    ...(listInputs && { inputs: Object.keys(output.inputs).sort() }),
  };
}

const early = await build({
  ...common,
  entryPoints: [join(dist, 'cli', 'early-stdio-start.js')],
  outfile: join(dist, 'mobile-builder-early.cjs'),
  plugins: [importMetaUrl],
});
record('early stdio bundle', early, 'dist/mobile-builder-early.cjs', true);

const stdio = await build({
  ...common,
  entryPoints: [join(dist, 'cli', 'main.js')],
  outfile: join(dist, 'mobile-builder-mcp.cjs'),
  // import() of the OAuth bundle as require(): the bin runs this bundle as a script, where import() is not available.
  supported: { 'dynamic-import': false },
  plugins: [importMetaUrl, oauthApart, modernApart, noAjv, memoryLimiterOnly, englishOnly],
  write: false,
});
// The first line names the build (a hash of the bundle): the bin keys its V8 code cache by it.
const code = stdio.outputFiles[0].contents;
await writeFile(
  join(dist, 'mobile-builder-mcp.cjs'),
  Buffer.concat([Buffer.from(`//build:${createHash('sha256').update(code).digest('hex').slice(0, 16)}\n`), code]),
);
record('stdio (and CLI) bundle', stdio, 'dist/mobile-builder-mcp.cjs');

const modern = await build({
  ...common,
  entryPoints: [join(dist, 'mcp', 'modern-era.js')],
  outfile: join(dist, 'mobile-builder-modern.cjs'),
  plugins: [importMetaUrl],
});
record('2026-07-28 era bundle', modern, 'dist/mobile-builder-modern.cjs');

const oauth = await build({
  ...common,
  entryPoints: [join(dist, 'oauth', 'oauth-routes.js')],
  outfile: join(dist, 'mobile-builder-oauth.cjs'),
  plugins: [importMetaUrl],
});
record('OAuth bundle', oauth, 'dist/mobile-builder-oauth.cjs');

await writeFile(join(dist, 'bundle-stats.json'), `${JSON.stringify(stats, null, 2)}\n`);
