/**
 * The README's host config, as written (README "Connect an MCP host"): pack the tarball, install it
 * globally into a fresh prefix (`npm install -g --prefix`), and run an SDK Client through exactly
 * the command, args and env of the README's Claude Desktop block, with the placeholder token
 * replaced by a real one. The block is read from README.md, so the README is what is tested.
 *
 * Slow: the install compiles better-sqlite3 from source when no prebuilt binary can be fetched
 * (about two minutes here), hence the long timeout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers.js';

const work = tempDir('mbm-install-');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The `mcpServers["mobile-builder"]` entry of the first JSON block after "**Claude Desktop**". */
function claudeDesktopConfig(): { command: string; args: string[]; env: Record<string, string> } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf('**Claude Desktop**'));
  const block = /```json\n([\s\S]*?)\n```/.exec(after)![1]!;
  return JSON.parse(block).mcpServers['mobile-builder'];
}

/** Runs a command without blocking the test worker (vitest's worker must keep answering its RPC). */
function run(command: string, args: string[], options: { cwd?: string; timeoutMs: number }): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

describe('global install from the packed tarball', () => {
  it('runs the README\'s Claude Desktop config through an SDK client', async () => {
    const config = claudeDesktopConfig();
    expect(config.command).toBe('mobile-builder-mcp');

    // --ignore-scripts: pack the dist/ that `npm test` built; rebuilding it here would rewrite files
    // that other test files' spawned servers are loading at the same moment.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, timeoutMs: 120_000 });
    expect(packed.status, packed.output).toBe(0);
    const tarball = readdirSync(work).find((f) => /^mobile-builder-mcp-.*\.tgz$/.test(f))!;
    const prefix = join(work, 'prefix');
    const install = await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball)], { timeoutMs: 420_000 });
    expect(install.status, install.output).toBe(0);

    // A fresh home: the default data dir (~/.mobile-builder-mcp) and nothing else of this machine's.
    const home = join(work, 'home');
    const env = { PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}`, HOME: home };
    const created = spawnSync(config.command, ['token', 'create', '--user', 'me'], { encoding: 'utf8', env });
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim().split('\n').at(-1)!;
    expect(JSON.stringify(config.env)).toContain('svc_...');
    const hostEnv = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, v.replace('svc_...', token)]));

    const client = new Client({ name: 'claude-desktop-config', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: config.command, args: config.args, env: { ...env, ...hostEnv }, stderr: 'pipe' }));
    try {
      expect((await client.listTools()).tools).toHaveLength(7);
      const created = await client.callTool({ name: 'svc_create_project', arguments: { name: 'Installed' } });
      expect(created.structuredContent).toMatchObject({ name: 'Installed' });
      const listed = await client.callTool({ name: 'svc_list_projects', arguments: {} });
      expect((listed.structuredContent as { projects: Array<{ name: string }> }).projects.map((p) => p.name)).toEqual(['Installed']);
    } finally {
      await client.close();
    }
  }, 600_000);
});
