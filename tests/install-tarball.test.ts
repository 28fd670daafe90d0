/**
 * The README's host config, as written (README "Connect an MCP host"): pack the tarball, install it
 * globally into a fresh prefix (`npm install -g --prefix`), and run an SDK Client through exactly
 * the command, args and env of the README's Claude Desktop block, with the placeholder token
 * replaced by a real one. The block is read from README.md, so the README is what is tested.
 *
 * better-sqlite3 installs the way it does for users: `prebuild-install` downloads a prebuilt
 * binary. This machine reaches no release host, so the test serves the binary this checkout
 * already built from a loopback mirror (`npm_config_better_sqlite3_binary_host`, prebuild-install's
 * documented mirror setting). Without the mirror the install compiles from source (about two
 * minutes here), which is why the timeout stays long.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCommand, tempDir } from './helpers.js';

const work = tempDir('mbm-install-');
let mirror: Server | undefined;
afterAll(() => {
  mirror?.close();
  rmSync(work, { recursive: true, force: true });
});

/**
 * A loopback prebuild mirror serving this checkout's compiled better-sqlite3 under the name
 * prebuild-install asks for. @returns the mirror's base URL.
 */
async function startPrebuildMirror(): Promise<string> {
  const archive = join(work, 'better-sqlite3-prebuilt.tar.gz');
  const packed = spawnSync('tar', [
    '-czf',
    archive,
    '-C',
    join(ROOT, 'node_modules', 'better-sqlite3'),
    'build/Release/better_sqlite3.node',
  ]);
  if (packed.status !== 0) throw new Error(`tar failed: ${packed.stderr}`);
  const body = readFileSync(archive);
  mirror = createServer((req, res) => {
    if (!req.url?.endsWith(`-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/gzip', 'Content-Length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => mirror!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
}

/** The `mcpServers["mobile-builder"]` entry of the first JSON block after "**Claude Desktop**". */
function claudeDesktopConfig(): { command: string; args: string[]; env: Record<string, string> } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf('**Claude Desktop**'));
  const block = /```json\n([\s\S]*?)\n```/.exec(after)![1]!;
  return JSON.parse(block).mcpServers['mobile-builder'];
}

describe('global install from the packed tarball', () => {
  it("runs the README's Claude Desktop config through an SDK client", async () => {
    const config = claudeDesktopConfig();
    expect(config.command).toBe('mobile-builder-mcp');

    // --ignore-scripts: pack the dist/ that `npm test` built; rebuilding it here would rewrite files
    // that other test files' spawned servers are loading at the same moment.
    const packed = await runCommand('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
      cwd: ROOT,
      timeoutMs: 300_000,
    });
    expect(packed.status, packed.stdout + packed.stderr).toBe(0);
    const tarball = readdirSync(work).find((f) => /^mobile-builder-mcp-.*\.tgz$/.test(f))!;
    const prefix = join(work, 'prefix');
    const binaryHost = await startPrebuildMirror();
    const install = await runCommand(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball)],
      {
        timeoutMs: 900_000,
        env: { ...process.env, npm_config_better_sqlite3_binary_host: binaryHost },
      },
    );
    expect(install.status, install.stdout + install.stderr).toBe(0);

    // A fresh home: the default data dir (~/.mobile-builder-mcp) and nothing else of this machine's.
    const home = join(work, 'home');
    const env = { PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}`, HOME: home };
    const created = spawnSync(config.command, ['token', 'create', '--user', 'me'], { encoding: 'utf8', env });
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim().split('\n').at(-1)!;
    expect(JSON.stringify(config.env)).toContain('svc_...');
    const hostEnv = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, v.replace('svc_...', token)]));

    const client = new Client({ name: 'claude-desktop-config', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...env, ...hostEnv },
        stderr: 'pipe',
      }),
    );
    try {
      expect((await client.listTools()).tools).toHaveLength(7);
      const created = await client.callTool({ name: 'svc_create_project', arguments: { name: 'Installed' } });
      expect(created.structuredContent).toMatchObject({ name: 'Installed' });
      const listed = await client.callTool({ name: 'svc_list_projects', arguments: {} });
      expect((listed.structuredContent as { projects: Array<{ name: string }> }).projects.map((p) => p.name)).toEqual([
        'Installed',
      ]);
    } finally {
      await client.close();
    }
  }, 1_200_000);
});
