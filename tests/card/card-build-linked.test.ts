/**
 * The session card's build (scripts/build-card.mjs) learns what to keep from the module paths
 * esbuild writes in a build not minified. Those are relative to the checkout, so they change when
 * its `node_modules` is a link to another folder (a worktree sharing one install, a cached
 * install): the card must come out the same, byte for byte, from such a checkout.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers.js';

const run = promisify(execFile);

/** Builds the card of checkout `dir` into `out`, from another working folder; resolves with the HTML. */
async function cardOf(dir: string, out: string): Promise<string> {
  await run(process.execPath, [join(dir, 'scripts/build-card.mjs'), '--out', out], { cwd: tempDir('mbm-card-cwd-') });
  return readFileSync(out, 'utf8');
}

let here: string;
let linked: string;

beforeAll(async () => {
  // A checkout of the card's sources whose node_modules is a link to this one's. This checkout's
  // card goes to a file of its own (another test builds dist/session-card.html).
  const copy = tempDir('mbm-card-linked-');
  cpSync(join(ROOT, 'scripts'), join(copy, 'scripts'), { recursive: true });
  mkdirSync(join(copy, 'assets'));
  cpSync(join(ROOT, 'assets/card'), join(copy, 'assets/card'), { recursive: true });
  // esbuild reads tsconfig.json (its `strict` makes the bundle's "use strict").
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(ROOT, file), join(copy, file));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  const outs = tempDir('mbm-card-out-');
  [here, linked] = await Promise.all([cardOf(ROOT, join(outs, 'here.html')), cardOf(copy, join(outs, 'linked.html'))]);
});

describe('the card built from a checkout whose node_modules is a link', () => {
  it("is this checkout's card, byte for byte", () => {
    expect(here.length).toBeGreaterThan(0);
    // Lengths first: a failure shows the two sizes, not two cards of 100 KB.
    expect(linked.length).toBe(here.length);
    expect(linked === here).toBe(true);
  });
});
