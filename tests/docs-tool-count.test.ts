/**
 * The number of tools has one source: the tool registry (`src/mcp/tools/index.ts`, what
 * `tools/list` shows). Prose that counts them ("seven `svc_` tools", "all seven tools") in the
 * README, docs/ and src/ (the OAuth consent page says it too) names that number.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_TOOLS } from '../src/mcp/tools/index.js';
import { ROOT } from './helpers.js';

const WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
];

/** "seven tools", "seven `svc_` tools", "7 tools", "the seven `svc_*` tools", in any case. */
const COUNTED = new RegExp(`\\b(${WORDS.join('|')}|\\d+) (?:\`svc_\\*?\` )?tools\\b`, 'gi');

function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full).flatMap((name) => filesUnder(join(path, name)));
}

describe('the number of tools', () => {
  it('the registry has a number the prose can spell', () => {
    expect(ALL_TOOLS.length).toBeGreaterThan(0);
    expect(ALL_TOOLS.length).toBeLessThan(WORDS.length);
  });

  it('is the same in the README, docs/ and src/ as in the tool registry', () => {
    const files = ['README.md', 'docs', 'src'].flatMap(filesUnder).filter((f) => /\.(md|ts)$/.test(f));
    const counts: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(COUNTED)) {
        const said = /^\d+$/.test(m[1]!) ? Number(m[1]) : WORDS.indexOf(m[1]!.toLowerCase());
        counts.push(`${relative(ROOT, file)}: "${m[0]}" says ${said}`);
      }
    }
    // The README's own count, at least, is there to check.
    expect(counts.some((c) => c.startsWith('README.md:'))).toBe(true);
    const wrong = counts.filter((c) => !c.endsWith(` says ${ALL_TOOLS.length}`));
    expect(wrong, `the registry has ${ALL_TOOLS.length} tools`).toEqual([]);
  });
});
