/**
 * Small rules with one home: the HTML escaper (src/io/html-escape.ts), the loopback host names
 * (src/io/loopback-hosts.ts) and the workflow states (src/core/workflow-states.ts). A copy
 * elsewhere in src/ fails here, so the next change has one place to make.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../src/io/html-escape.js';
import { isLoopbackHostname } from '../src/io/loopback-hosts.js';
import { ROOT } from './helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The files of src/ (paths from the root) whose text matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  return sources(join(ROOT, 'src'))
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file).split('\\').join('/'));
}

describe('one definition per small rule', () => {
  it('escapes HTML in one place', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(filesMatching(/['"]&['"]\s*:\s*['"]&amp;['"]/)).toEqual(['src/io/html-escape.ts']);
  });

  it('lists the loopback host names in one place', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '::1', '[::1]'])
      expect(isLoopbackHostname(host), host).toBe(true);
    for (const host of ['127.0.0.2', '0.0.0.0', '::', 'example.com', 'localhost.example.com', '[::2]'])
      expect(isLoopbackHostname(host), host).toBe(false);
    expect(filesMatching(/['"]localhost['"]|['"]\[::1\]['"]/)).toEqual(['src/io/loopback-hosts.ts']);
  });

  it('spells the workflow states only in the state table', () => {
    expect(filesMatching(/\[\s*'running',\s*'waiting_for_input'/)).toEqual(['src/core/workflow-states.ts']);
  });
});
