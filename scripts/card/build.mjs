// The session card's esbuild passes (scripts/build-card.mjs): one run over assets/card/card.js
// with every trim (bundleCard), and the loop that rebuilds, not minified, until the code kept
// stops shrinking, then builds it minified and inlines it into assets/card/card.html (buildCard).
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { appBridgeTrims, pureSdk, pureSdkSchemas, sdkClientTrims } from './protocol-trims.mjs';
import { accessedNames, calledNames, namedMethods, privateMembers } from './usage.mjs';
import { englishOnly, noZodJsonSchema, zodUtilTreeShaken } from './zod-trims.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * One esbuild run over the card's script; `used`: what the last build not minified reached
 * (buildCard), undefined for the first.
 */
function bundleCard({ minify, used }) {
  return build({
    entryPoints: [join(root, 'assets/card/card.js')],
    // Module paths (the headers usage.mjs reads) relative to the checkout, whatever the caller's
    // working folder.
    absWorkingDir: root,
    bundle: true,
    minify,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    // The members the code reads on `this` named `_...` (privateMembers) get short names, as
    // local variables do.
    ...(minify &&
      used?.members.size > 0 && {
        mangleProps: new RegExp(`^(${[...used.members].map((m) => m.replaceAll('$', '\\$')).join('|')})$`),
      }),
    // The bridge's transport logs every message it parses at debug level; nothing else is dropped.
    pure: ['console.debug'],
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [
      englishOnly,
      pureSdk,
      pureSdkSchemas,
      appBridgeTrims(used),
      sdkClientTrims(used),
      zodUtilTreeShaken(used),
      noZodJsonSchema,
    ],
  });
}

/**
 * Builds the card into `out` (default: dist/session-card.html of this checkout); resolves with the
 * path written, its size in bytes and esbuild's metafile (what each module adds, for
 * `analyzeMetafile`).
 */
export async function buildCard({ out = join(root, 'dist/session-card.html') } = {}) {
  // Builds not minified give the code kept and so the methods it calls (calledNames); each next
  // build keeps only those, so keeps a part of the code before it: until that stops shrinking.
  let used;
  for (let size = Infinity; ;) {
    const text = (await bundleCard({ minify: false, used })).outputFiles[0].text;
    if (text.length >= size) break;
    size = text.length;
    used = {
      called: calledNames(text),
      accessed: accessedNames(text),
      methods: namedMethods(text),
      members: privateMembers(text),
    };
  }
  const bundle = await bundleCard({ minify: true, used });
  const script = bundle.outputFiles[0].text.replaceAll('</script', '<\\/script');
  const template = await readFile(join(root, 'assets/card/card.html'), 'utf8');
  const html = template.replace('/*CARD_SCRIPT*/', () => script);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, html);
  return { path: out, bytes: Buffer.byteLength(html), metafile: bundle.metafile };
}
