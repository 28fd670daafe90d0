/**
 * The split of the fast tests (tests/setup/test-kinds.ts): every listed process test exists, and no
 * unit test spawns the bin, a browser or a third-party client (it would run without a fresh dist/
 * and slow the unit loop down).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROCESS_MARKERS, PROCESS_TESTS } from './setup/test-kinds.js';
import { ROOT } from './helpers.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(ROOT, path).split('\\').join('/')] : [];
  });
}

describe('unit and process tests', () => {
  const all = testFiles(join(ROOT, 'tests')).filter((f) => !f.startsWith('tests/expo/'));

  it('lists only process tests that exist', () => {
    expect(PROCESS_TESTS.filter((f) => !all.includes(f))).toEqual([]);
  });

  it('keeps the bin, browsers and client processes out of the unit tests', () => {
    const misplaced = all
      .filter((f) => !PROCESS_TESTS.includes(f))
      .flatMap((f) => {
        const text = readFileSync(join(ROOT, f), 'utf8');
        return PROCESS_MARKERS.filter((marker) => marker.test(text)).map(
          (marker) => `${f} matches ${marker} (list it in tests/setup/test-kinds.ts)`,
        );
      });
    expect(misplaced).toEqual([]);
  });
});
