/** The built bin over stdio, driven by the SDK's `StdioClientTransport` (docs/cli.md#command-line). */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, rawHttp, rpcErrorOf, tempDir, waitFor } from './helpers.js';
import { cliToken, runCli } from './bin-helpers.js';

let dataDir: string;
let token: string;

beforeAll(() => {
  dataDir = tempDir();
  token = cliToken(dataDir, 'alice');
});

async function connect(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--builder', 'scripted', '--scripted-step-ms', '10'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('stdio transport (spawned bin)', () => {
  let client: Client;
  let projectId: string;
  afterAll(() => client?.close());

  it('lists the seven tools, creates and lists projects, and runs a build whose preview is served', async () => {
    client = await connect({ SVC_API_TOKEN: token });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(7);
    const created = await client.callTool({ name: 'svc_create_project', arguments: { name: 'Over stdio' } });
    const project = created.structuredContent as any;
    projectId = project.id;
    expect(project.name).toBe('Over stdio');
    const listed = await client.callTool({ name: 'svc_list_projects', arguments: {} });
    expect((listed.structuredContent as any).projects.map((p: any) => p.id)).toContain(project.id);
    await client.callTool({ name: 'svc_send_message', arguments: { projectId: project.id, message: 'build it' } });
    const session = await waitFor(async () => {
      const s = (await client.callTool({ name: 'svc_get_session', arguments: { projectId: project.id } }))
        .structuredContent as any;
      return s.hasActiveWorkflows ? null : s;
    });
    const page = await rawHttp(session.previewUrls[0].url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Over stdio');
  });

  it("errors are JSON-RPC error objects with the table's codes", async () => {
    const error = await client.callTool({ name: 'svc_get_project', arguments: { projectId: 'nope' } }).catch((e) => e);
    expect(rpcErrorOf(error)).toMatchObject({ code: -32602, message: 'Invalid parameter: projectId must be a UUID' });
  });

  it('without SVC_API_TOKEN it starts and lists tools, and every tool call answers -32001', async () => {
    const anonymous = await connect({});
    expect((await anonymous.listTools()).tools).toHaveLength(7);
    const error = await anonymous.callTool({ name: 'svc_list_projects', arguments: {} }).catch((e) => e);
    expect(rpcErrorOf(error)).toMatchObject({
      code: -32001,
      message: 'Authentication failed - invalid or expired API key',
    });
    await anonymous.close();
  });

  it('a read-only token (token create --read-only) lists only the read-only tools, and a write answers -32003', async () => {
    const readOnly = cliToken(dataDir, 'alice', ['--read-only']);
    const listed = runCli(['token', 'list', '--user', 'alice', '--data-dir', dataDir]).stdout;
    expect(listed).toMatch(/ACCESS/);
    expect(listed).toMatch(/read-only/);
    const reader = await connect({ SVC_API_TOKEN: readOnly });
    try {
      expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'svc_get_messages',
        'svc_get_project',
        'svc_get_session',
        'svc_list_projects',
      ]);
      expect(
        (await reader.callTool({ name: 'svc_get_session', arguments: { projectId } })).structuredContent,
      ).toMatchObject({ projectId });
      const error = await reader
        .callTool({ name: 'svc_send_message', arguments: { projectId, message: 'build it' } })
        .catch((e) => e);
      expect(rpcErrorOf(error)).toMatchObject({
        code: -32003,
        data: { reason: 'read_only_token', tool: 'svc_send_message' },
      });
    } finally {
      await reader.close();
    }
  });

  it('without --port, each stdio server serves its previews on a free port of its own (not 3333)', async () => {
    const env: Record<string, string | undefined> = { ...process.env, SVC_API_TOKEN: token };
    delete env.SVC_PORT;
    const start = () => {
      const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', tempDir(), '--builder', 'scripted'], {
        env,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'two', version: '1' } } })}\n`,
      );
      return { child, port: () => /"previews":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(err)?.[1] };
    };
    const servers = [start(), start()];
    const ports = await Promise.all(servers.map((server) => waitFor(server.port, 20_000, 'the preview listener')));
    for (const server of servers) {
      server.child.stdin.end();
      await new Promise((r) => server.child.once('exit', r));
    }
    expect(ports).not.toContain('3333');
    expect(ports[0]).not.toBe(ports[1]);
  });

  it('a call sent with initialize, before the preview listener is up, gets preview links that name its real port', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--builder', 'scripted'],
      { env: { ...process.env, SVC_API_TOKEN: token }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // One write: the call is read before the answer to initialize starts the preview listener.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'eager', version: '1' } } })}\n` +
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_get_session', arguments: { projectId } } })}\n`,
    );
    await waitFor(() => out.split('\n').filter(Boolean).length >= 2, 20_000, 'two replies');
    const session = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.id === 2).result.structuredContent;
    // The link works while this server runs: it names the listener's port, not the default 3333.
    const page = await rawHttp(session.previewUrls[0].url);
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Over stdio');
  });

  it('answers an unparsable line with -32700 and id null, keeps stdout for protocol only, and logs to stderr', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--builder', 'scripted'],
      { env: { ...process.env, SVC_API_TOKEN: token }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.write('this is not json\n');
    child.stdin.write('{"jsonrpc":"2.0","id":9,"method":"ping"}\n');
    await waitFor(() => out.split('\n').filter(Boolean).length >= 2, 10_000, 'two replies');
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    const lines = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines).toContainEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect(lines).toContainEqual({ jsonrpc: '2.0', id: 9, result: {} });
    expect(lines).toHaveLength(2);
    expect(err).toContain('serving MCP over stdio');
    expect(err).not.toContain(token);
  });
});
