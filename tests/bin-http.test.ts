/**
 * The built bin over streamable HTTP on port 0, with the SDK client and raw fetch; the CLI of
 * docs/cli.md#command-line; and the MCP Inspector's CLI as an independent client over both transports.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, httpClient, post, rawHttp, ROOT, runCommand, tempDir, waitFor } from './helpers.js';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';

let dataDir: string;
let server: SpawnedServer;
let token: string;

beforeAll(async () => {
  dataDir = tempDir();
  token = cliToken(dataDir, 'alice');
  server = await spawnHttpServer(dataDir, ['--scripted-step-ms', '10']);
});
afterAll(async () => {
  await server.stop();
});

describe('HTTP transport (spawned bin)', () => {
  it('serves the SDK client: list tools, create and list a project', async () => {
    const client = await httpClient(server.mcpUrl, token);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('svc_create_project');
    const created = (await client.callTool({ name: 'svc_create_project', arguments: { name: 'Over HTTP' } }))
      .structuredContent as any;
    const listed = (await client.callTool({ name: 'svc_list_projects', arguments: {} })).structuredContent as any;
    expect(listed.projects[0].id).toBe(created.id);
    await client.close();
  });

  it("answers raw requests with the table's statuses and headers", async () => {
    const ok = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } },
      token,
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/json');
    expect(ok.headers.get('x-ratelimit-limit')).toBe('100');
    const unauth = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const parse = await post(server.mcpUrl, 'nope', token);
    expect(parse.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    const health = await fetch(`${server.url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok', role: 'all' });
  });

  it('serves the web console and its static files from the built bundle', async () => {
    // The start-up line tells the operator where the console is.
    expect(server.stderr()).toContain(`web console: ${server.url}/`);
    const signin = await fetch(`${server.url}/signin`);
    expect(signin.status).toBe(200);
    expect(await signin.text()).toContain('<script src="/console/console.js" defer></script>');
    for (const file of ['console.js', 'console.css']) {
      const res = await fetch(`${server.url}/console/${file}`);
      expect(res.status, file).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(500);
    }
  });

  it('never writes a token to its logs', () => {
    expect(server.stderr()).not.toContain(token);
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    const other = await spawnHttpServer(tempDir());
    expect(await other.stop('SIGTERM')).toBe(0);
  });
});

describe('command line', () => {
  it('token create prints the token alone on the last line; list never prints it; revoke refuses it afterwards', async () => {
    const dir = tempDir();
    const created = runCli(['token', 'create', '--user', 'bob', '--expires-in', '30d', '--data-dir', dir]);
    expect(created.status).toBe(0);
    const secret = created.stdout.trim().split('\n').at(-1)!;
    expect(secret).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    const listed = runCli(['token', 'list', '--json', '--data-dir', dir]);
    expect(listed.stdout).not.toContain(secret);
    const [row] = JSON.parse(listed.stdout);
    expect(row).toMatchObject({ user: 'bob', state: 'active', prefix: `${secret.slice(0, 8)}…` });
    expect(Date.parse(row.expiresAt) - Date.parse(row.createdAt)).toBe(30 * 86_400_000);
    expect(runCli(['token', 'revoke', row.id, '--data-dir', dir]).status).toBe(0);
    expect(JSON.parse(runCli(['token', 'list', '--json', '--data-dir', dir]).stdout)[0].state).toBe('revoked');
    expect(runCli(['token', 'revoke', 'no-such-id', '--data-dir', dir]).status).toBe(1);
  });

  it('reads SVC_DATA_DIR, migrates, sets plans, and explains bad usage', () => {
    const dir = tempDir();
    const migrated = runCli(['migrate'], { SVC_DATA_DIR: dir });
    expect(migrated.status).toBe(0);
    expect(existsSync(join(dir, 'mobile-builder.db'))).toBe(true);
    const fresh = join(tempDir(), 'new-data-dir');
    expect(runCli(['migrate', '--data-dir', fresh]).status).toBe(0);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(runCli(['user', 'set-plan', 'carol', 'pro', '--data-dir', dir]).status).toBe(0);
    expect(runCli(['user', 'list', '--data-dir', dir]).stdout).toMatch(/carol\s+pro/);
    const badPlan = runCli(['user', 'set-plan', 'carol', 'platinum', '--data-dir', dir]);
    expect(badPlan.status).toBe(1);
    expect(badPlan.stderr).toContain('Unknown plan "platinum"');
    const badDuration = runCli(['token', 'create', '--user', 'x', '--expires-in', 'soon', '--data-dir', dir]);
    expect(badDuration.status).not.toBe(0);
    expect(badDuration.stderr).toContain('Invalid duration');
    const unknown = runCli(['frobnicate']);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/unknown command/i);
    for (const args of [['--help'], ['serve', '--help'], ['token', 'create', '--help']]) {
      const help = runCli(args);
      expect(help.status, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(/Usage: mobile-builder-mcp/);
    }
    expect(runCli(['serve', '--help']).stdout).toContain('--scripted-step-ms');
  });
});

describe('operator configuration errors', () => {
  it('serve refuses a bad plans file, a bad builder config, and the command builder without one, with a clear message', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir();
    writeFileSync(join(dir, 'plans.json'), JSON.stringify({ free: { requestsPerMinute: -1 } }));
    writeFileSync(join(dir, 'builder.json'), JSON.stringify({ build: { command: '' } }));
    const cases: Array<[string[], RegExp]> = [
      [['--plans', join(dir, 'plans.json')], /Invalid plans file .*plans\.json: free\.requestsPerMinute/],
      [['--plans', join(dir, 'missing.json')], /Cannot read plans file/],
      [
        ['--builder', 'command', '--builder-config', join(dir, 'builder.json')],
        /Invalid builder config .*: build\.command/,
      ],
      [['--builder', 'command'], /needs --builder-config/],
    ];
    for (const [args, message] of cases) {
      const out = runCli(['serve', '--http', '--port', '0', '--data-dir', dir, ...args]);
      expect(out.status, args.join(' ')).toBe(1);
      expect(out.stderr).toMatch(message);
    }
  });
});

describe('MCP Inspector CLI (independent client)', () => {
  // Not --silent: npm echoes the script line, and the token (given in the environment) must not be in it.
  const inspector = async (args: string[], t: string) => {
    const out = await runCommand('npm', ['run', 'inspect', '--', ...args], {
      cwd: ROOT,
      env: { ...process.env, SVC_API_TOKEN: t },
      timeoutMs: 180_000,
    });
    expect(out.stdout + out.stderr).not.toContain(t);
    expect(out.stdout).toContain('> node scripts/inspect.mjs');
    return out;
  };

  it('lists tools and creates and lists a project over stdio', async () => {
    const dir = tempDir();
    const t = cliToken(dir, 'inspector');
    const serve = ['node', BIN, 'serve', '--data-dir', dir, '--port', '0'];
    const list = await inspector([...serve, '--method', 'tools/list'], t);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain('svc_send_message');
    const create = await inspector(
      [...serve, '--method', 'tools/call', '--tool-name', 'svc_create_project', '--tool-arg', 'name=Inspected'],
      t,
    );
    expect(create.status, create.stderr).toBe(0);
    expect(create.stdout).toContain('"name": "Inspected"');
    const projects = await inspector([...serve, '--method', 'tools/call', '--tool-name', 'svc_list_projects'], t);
    expect(projects.stdout).toContain('Inspected');
  });

  it('lists tools and creates and lists a project over HTTP', async () => {
    const http = ['--transport', 'http'];
    const list = await inspector([server.mcpUrl, ...http, '--method', 'tools/list'], token);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain('svc_get_messages');
    const create = await inspector(
      [
        server.mcpUrl,
        ...http,
        '--method',
        'tools/call',
        '--tool-name',
        'svc_create_project',
        '--tool-arg',
        'name=ViaHttpInspector',
      ],
      token,
    );
    expect(create.status, create.stderr).toBe(0);
    const projects = await inspector(
      [server.mcpUrl, ...http, '--method', 'tools/call', '--tool-name', 'svc_list_projects'],
      token,
    );
    expect(projects.stdout).toContain('ViaHttpInspector');
  });
});

describe('changes made by another process', () => {
  it('a token revoked with the CLI while the server runs is refused within a second', async () => {
    // The CLI runs synchronously (it blocks this process), so requests here use fresh connections (no stale keep-alive sockets).
    const listProjects = (t: string) =>
      rawHttp(server.mcpUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${t}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_projects' } }),
      });
    const t = cliToken(dataDir, 'revokee');
    expect((await listProjects(t)).status).toBe(200);
    const id = JSON.parse(runCli(['token', 'list', '--json', '--user', 'revokee', '--data-dir', dataDir]).stdout)[0].id;
    expect(runCli(['token', 'revoke', id, '--data-dir', dataDir]).status).toBe(0);
    // Until the revocation is seen, the token still works; then it is refused for good.
    await waitFor(
      async () => {
        const res = await listProjects(t);
        expect([200, 401]).toContain(res.status);
        return res.status === 401;
      },
      20_000,
      'the revoked token to be refused',
    );
    expect((await listProjects(t)).status).toBe(401);
  });
});
