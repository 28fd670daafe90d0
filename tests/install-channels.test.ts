/**
 * Install channels (docs/hosts.md "More ways to connect"): the MCP Bundle that `npm run pack:mcpb` builds
 * with the `mcpb` CLI (its manifest validates; its server entry starts the bin over stdio with the
 * token from user_config), and `server.json` for the MCP registry against package.json.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken } from './bin-helpers.js';
import { ROOT, runCommand, tempDir } from './helpers.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const MCPB = join(ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');

describe('the MCP Bundle', () => {
  let unpacked: string;
  let manifest: any;
  // Asynchronous commands: a worker blocked in spawnSync for a minute (the pack, on a busy machine)
  // cannot answer vitest's own RPC, and the run fails although every test passed.
  beforeAll(async () => {
    const out = tempDir('mbm-mcpb-out-');
    const pack = await runCommand('npm', ['run', '--silent', 'pack:mcpb', '--', '--out', out], {
      cwd: ROOT,
      timeoutMs: 300_000,
    });
    expect(pack.status, pack.stderr).toBe(0);
    const file = pack.stdout.trim().split('\n').at(-1)!;
    // Named for its platform: the better-sqlite3 addon inside runs only there.
    expect(file).toBe(join(out, `mobile-builder-mcp-${pkg.version}-${process.platform}-${process.arch}.mcpb`));
    unpacked = tempDir('mbm-mcpb-unpacked-');
    expect((await runCommand(process.execPath, [MCPB, 'unpack', file, unpacked], { timeoutMs: 120_000 })).status).toBe(
      0,
    );
    manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'));
  });

  it("has a manifest the mcpb CLI validates, with the package's name and version and the seven tools", async () => {
    const validate = await runCommand(process.execPath, [MCPB, 'validate', join(unpacked, 'manifest.json')], {
      timeoutMs: 120_000,
    });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    expect(manifest).toMatchObject({
      name: pkg.name,
      version: pkg.version,
      server: { type: 'node', entry_point: 'bin/mobile-builder-mcp.js' },
    });
    expect(manifest.tools.map((t: { name: string }) => t.name)).toHaveLength(7);
    expect(manifest.manifest_version).toBe('0.4');
    expect(manifest.compatibility.platforms).toEqual([process.platform]);
  });

  it("has the server's icon, a 128x128 PNG in the bundle", () => {
    expect(manifest.icon).toBe('icon.png');
    expect(manifest.icons).toEqual([{ src: 'icon.png', size: '128x128' }]);
    const png = readFileSync(join(unpacked, 'icon.png'));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([128, 128]);
  });

  it('holds no build intermediates: only the start-up bundles of dist/, the MCP Apps card and the loaded addon of better-sqlite3', () => {
    expect(readdirSync(join(unpacked, 'dist')).sort()).toEqual(
      readdirSync(join(ROOT, 'dist'))
        .filter((f) => f.endsWith('.cjs') || f === 'session-card.html')
        .sort(),
    );
    const addon = join(unpacked, 'node_modules', 'better-sqlite3');
    expect(readdirSync(join(addon, 'build'), { recursive: true }).map(String).sort()).toEqual([
      'Release',
      join('Release', 'better_sqlite3.node'),
    ]);
    for (const dir of ['deps', 'src']) expect(existsSync(join(addon, dir)), dir).toBe(false);
  });

  it('asks for the API token as a sensitive user_config field that reaches the server as SVC_API_TOKEN', () => {
    expect(manifest.user_config.api_token).toMatchObject({ type: 'string', sensitive: true, required: true });
    expect(manifest.server.mcp_config.env).toEqual({ SVC_API_TOKEN: '${user_config.api_token}' });
  });

  it('its server entry runs serve over stdio from the bundle, and the token from user_config authenticates', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    // What a host does with the manifest: substitute ${__dirname} and ${user_config.*}.
    const fill = (s: string) => s.replaceAll('${__dirname}', unpacked).replaceAll('${user_config.api_token}', token);
    const { command, args, env } = manifest.server.mcp_config;
    expect(command).toBe('node');
    const client = new Client({ name: 'bundle', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...args.map(fill), '--data-dir', dataDir, '--port', '0'],
        env: {
          PATH: process.env.PATH!,
          HOME: dataDir,
          ...Object.fromEntries(Object.entries(env as Record<string, string>).map(([k, v]) => [k, fill(v)])),
        },
        stderr: 'ignore',
      }),
    );
    try {
      const result = await client.callTool({ name: 'svc_list_projects', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toHaveProperty('projects');
    } finally {
      await client.close();
    }
  });
  afterAll(() => undefined);
});

describe('server.json for the MCP registry', () => {
  const server = JSON.parse(readFileSync(join(ROOT, 'server.json'), 'utf8'));

  it("names the server in reverse-DNS form, the same name as package.json's mcpName, at package.json's version", () => {
    expect(server.name).toMatch(/^io\.github\.[A-Za-z0-9-]+\/mobile-builder-mcp$/);
    expect(pkg.mcpName).toBe(server.name);
    expect(server.version).toBe(pkg.version);
    expect(server.$schema).toMatch(
      /^https:\/\/static\.modelcontextprotocol\.io\/schemas\/[\d-]+\/server\.schema\.json$/,
    );
  });

  it('has one npm package entry, over stdio, running serve, with SVC_API_TOKEN a required secret', () => {
    expect(server.packages).toHaveLength(1);
    const [entry] = server.packages;
    expect(entry).toMatchObject({
      registryType: 'npm',
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: 'stdio' },
    });
    expect(entry.packageArguments).toEqual([{ type: 'positional', value: 'serve' }]);
    expect(entry.environmentVariables).toEqual([
      expect.objectContaining({ name: 'SVC_API_TOKEN', isSecret: true, isRequired: true }),
    ]);
  });
});
