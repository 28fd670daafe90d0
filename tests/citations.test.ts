/**
 * Every citation of a documentation section names one that exists: links and mentions with an
 * anchor (`README.md#code-questions`, `docs/contract.md#errors`, `](#limits-and-plans)`) and prose
 * citations of a heading (`README "Code questions"`), in `src/`, `docs/`, `bin/`, `scripts/`,
 * `tests/`, the README and the CHANGELOG. Anchors follow GitHub's rules: the heading's text in lower case, punctuation other
 * than `-` and `_` dropped, spaces as `-`, and `-1`, `-2`... for repeated headings.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** GitHub's anchor of a heading's text. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

interface Sections {
  headings: Set<string>;
  anchors: Set<string>;
}

const sectionsCache = new Map<string, Sections>();
/** The headings (as written) and anchors of a Markdown file. */
function sectionsOf(file: string): Sections {
  const cached = sectionsCache.get(file);
  if (cached) return cached;
  const headings = new Set<string>();
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    headings.add(h[1]!.replace(/`/g, '').toLowerCase());
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  const sections = { headings, anchors };
  sectionsCache.set(file, sections);
  return sections;
}

/** The Markdown file a citation names, seen from `from`: README and CHANGELOG at the root, the others in docs/. */
function target(name: string, from: string): string {
  if (name === '') return from;
  const file = basename(name);
  if (file === 'README.md' || file === 'README') return join(ROOT, 'README.md');
  return file === 'CHANGELOG.md' ? join(ROOT, 'CHANGELOG.md') : join(ROOT, 'docs', file);
}

function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full).flatMap((name) => filesUnder(join(path, name)));
}

/** Every citation in `file` that names a section that does not exist, as `file:line: citation`. */
function brokenCitations(file: string): string[] {
  const broken: string[] = [];
  const markdown = file.endsWith('.md');
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const where = `${relative(ROOT, file)}:${i + 1}`;
      // README.md#anchor, docs/contract.md#anchor, contract.md#anchor, and (#anchor) in Markdown.
      for (const m of line.matchAll(/((?:[\w./-]*\/)?(?:README|[\w-]+\.md))#([\w-]+)|\]\(#([\w-]+)\)/g)) {
        const [name, anchor] = m[3] ? ['', m[3]] : [m[1]!, m[2]!];
        if (!markdown && name === '') continue;
        const doc = target(name, file);
        if (!sectionsOf(doc).anchors.has(anchor)) broken.push(`${where}: ${m[0]}`);
      }
      // README "Heading", README's "Heading", (README, "Heading"), docs/workflows.md "Heading".
      for (const m of line.matchAll(/\b((?:[\w./-]*\/)?(?:README(?:\.md)?|[\w-]+\.md))(?:[’']s|,)?\s+"([^"]+)"/g)) {
        const doc = target(m[1]!, file);
        if (!sectionsOf(doc).headings.has(m[2]!.replace(/`/g, '').toLowerCase())) broken.push(`${where}: ${m[0]}`);
      }
    });
  return broken;
}

describe('citations of documentation sections', () => {
  it('computes anchors as GitHub does', () => {
    expect(slug('Code questions')).toBe('code-questions');
    expect(slug('Tokens and security')).toBe('tokens-and-security');
    expect(slug('`svc_get_session`: waits & progress')).toBe('svc_get_session-waits--progress');
  });

  it('name headings and anchors that exist', () => {
    // The tests cite the sections they check too; this file's own examples are not citations.
    const files = ['README.md', 'CHANGELOG.md', 'docs', 'src', 'bin', 'scripts', 'tests']
      .flatMap(filesUnder)
      .filter((f) => /\.(ts|js|mjs|cjs|md|sh)$/.test(f) && f !== fileURLToPath(import.meta.url));
    expect(files.flatMap(brokenCitations)).toEqual([]);
  });
});
