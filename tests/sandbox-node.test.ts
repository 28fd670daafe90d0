/**
 * The build sandbox runs children on the server's own node (docs/security.md "The build sandbox"):
 * the node's folder is bound after the sandbox's private /tmp and /home, so a node installed under
 * a home folder (scripts/with-node-24.sh puts Node 24 in ~/.cache) is not hidden, and `npm` and the
 * Expo CLI inside run on it rather than on an older node in /usr.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectBuildSandbox, sandboxLaunch } from '../src/builders/process-sandbox.js';

const prefix = dirname(dirname(realpathSync(process.execPath)));
const request = { file: 'node', args: ['-p', 'process.version'], cwd: tmpdir() };

describe('the build sandbox and the server node', () => {
  it('binds the node folder after the private /tmp and /home', (ctx) => {
    if (prefix === '/usr' || prefix.startsWith('/usr/')) ctx.skip(); // a node in /usr is always bound
    const { args } = sandboxLaunch(request, { kind: 'bubblewrap', bwrap: '/usr/bin/bwrap' });
    const at = (...words: string[]) => args.findIndex((_, i) => words.every((w, j) => args[i + j] === w));
    const bound = at('--ro-bind', prefix, prefix);
    expect(bound).toBeGreaterThan(at('--tmpfs', '/tmp'));
    expect(bound).toBeGreaterThan(at('--tmpfs', '/home'));
    expect(at('--tmpfs', '/home')).toBeGreaterThan(-1);
  });

  it('a child in the sandbox runs on the same node version as the server', (ctx) => {
    const sandbox = detectBuildSandbox();
    if (sandbox.kind !== 'bubblewrap') ctx.skip(); // no bubblewrap here: docs/security.md says how to install it
    const launch = sandboxLaunch(request, sandbox);
    const run = spawnSync(launch.file, launch.args, { env: launch.env, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(process.version);
  });
});
