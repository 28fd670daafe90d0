// Builds the MCP Apps session card (src/mcp/app-card.ts) into one self-contained HTML file,
// dist/session-card.html: assets/card/card.js and what it imports (the extension's App bridge)
// bundled by esbuild and inlined into assets/card/card.html. No network, no other file. (Its QR
// codes come drawn from the server, src/mcp/card-qr.ts: the card bundles no QR encoder.)
//
//   node scripts/build-card.mjs             builds it and prints its size in bytes (stderr)
//   node scripts/build-card.mjs --out FILE  writes it to FILE instead
//   node scripts/build-card.mjs --analyze   also prints what each module adds (esbuild's
//                                           analyzeMetafile), the way to find what to trim next
//
// The bytes are the App bridge of @modelcontextprotocol/ext-apps, the SDK's Protocol under it
// (@modelcontextprotocol/client) and zod, which the SDK validates every message with. Each trim
// below leaves out what the card cannot reach, without changing what the bridge says or checks
// on any path the card takes; what is left out of a reachable object (a method, a schema of a
// method) is replaced by a function that throws, so a path that reached it fails loudly:
// - appBridgeTrims: esbuild keeps only the zod the bridge uses (the whole namespace was kept),
//   and the bridge's schema descriptions (read only by JSON Schema conversion) are left out;
// - sdkClientTrims: values the SDK computes at load (its spec schema registry) are kept only if
//   read; the 2026-07-28 wire schemas and codec, which the App bridge never speaks, are left out
//   (stubCodec2026); of the 2025-11-25 schemas, those of the methods the card's code names
//   (pruneSchemas2025, namedMethods);
// - pruneUncalledMethods (through the two above): the bridge's and the Protocol's methods and
//   accessors that no code in the card calls or reads (calledNames, accessedNames);
// - pureModuleValues (through the two above and for the SDK's schema module): every module-level
//   value of the SDK and the bridge (message schemas, error classes, tables) is kept only if read;
// - zodUtilTreeShaken: only the helpers of zod's util module that zod calls are kept, zod's
//   classic methods that nothing calls are left out (pruneZodMethods), and so is the object JIT
//   (the bridge sets zod `jitless`) and each type's JSON Schema hook;
// - isoTreeShaken: only the ISO formats the SDK reads (`z.iso.datetime`);
// - noZodJsonSchema: zod's JSON Schema conversion (the card converts no schema) is left out;
// - englishOnly: zod's error messages in English alone;
// - pureSdk: the SDK's modules the bridge does not import are left out;
// and `pure: ['console.debug']` drops the bridge's per-message debug logging, and `mangleProps`
// shortens the `_` members read on `this` (privateMembers). What a trim keeps is learned from
// the code itself: builds not minified run until the code kept stops shrinking (buildCard).
//
// The build is in scripts/card/: build.mjs (the esbuild passes and the loop), usage.mjs (what
// the code kept uses), protocol-trims.mjs (the App bridge and the SDK's Protocol),
// wire-schemas.mjs (the SDK's wire-schema tables and codecs), zod-trims.mjs (zod) and
// module-edits.mjs (the source edits they share).
import { analyzeMetafile } from 'esbuild';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildCard } from './card/build.mjs';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const { path, bytes, metafile } = await buildCard(at > 0 ? { out: resolve(process.argv[at + 1]) } : {});
  if (process.argv.includes('--analyze')) process.stderr.write(await analyzeMetafile(metafile));
  process.stderr.write(`${path}: ${bytes} bytes\n`);
}
