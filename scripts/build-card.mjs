// Builds the MCP Apps session card (src/mcp/app-card.ts) into one self-contained HTML file,
// dist/session-card.html: assets/card/card.js and what it imports (the extension's App bridge,
// qrcode) bundled by esbuild and inlined into assets/card/card.html. No network, no other file.
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * zod's namespace of every locale (about 230 KB minified, kept whole because the SDK imports
 * zod as a namespace) becomes English alone: the card never shows a zod message in another
 * language, and English is zod's default.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (/[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '../locales/en.js'), namespace: 'zod-en' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: root }));
  },
};

/**
 * The SDK's packages declare no `sideEffects`, so esbuild keeps every module the App bridge's
 * imports reach (the client's HTTP transports, OAuth, ...). Their modules only define things:
 * marked free of side effects, only what the bridge uses stays.
 */
const pureSdk = {
  name: 'pure-sdk',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.pure || args.namespace !== 'file') return undefined;
      const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { pure: true } });
      if (resolved.errors.length > 0 || !/[\\/]node_modules[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(resolved.path)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/** Builds the card; resolves with the path written and its size in bytes. */
export async function buildCard() {
  const bundle = await build({
    entryPoints: [join(root, 'assets/card/card.js')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
    plugins: [englishOnly, pureSdk],
  });
  const script = bundle.outputFiles[0].text.replaceAll('</script', '<\\/script');
  const template = await readFile(join(root, 'assets/card/card.html'), 'utf8');
  const html = template.replace('/*CARD_SCRIPT*/', () => script);
  const out = join(root, 'dist/session-card.html');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, html);
  return { path: out, bytes: Buffer.byteLength(html) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { path, bytes } = await buildCard();
  process.stderr.write(`${path}: ${bytes} bytes\n`);
}
