/**
 * What the operator reads on stderr (docs/contract.md "Tokens and security"): a stdio token that cannot
 * work in this data dir, an unwritable data dir, failed authentications and cancellations. A
 * token never appears in any of it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { BIN, post, tempDir, toolResult, waitFor } from './helpers.js';

let dataDir: string;
beforeAll(() => {
  dataDir = tempDir();
});

/** Starts the stdio server with `token`, answers initialize, and returns its stderr so far. */
async function stdioStartLog(token: string | undefined): Promise<string> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', '--data-dir', dataDir, '--port', '0'],
    env: { PATH: process.env.PATH ?? '', ...(token !== undefined && { SVC_API_TOKEN: token }) },
    stderr: 'pipe',
  });
  let log = '';
  (transport.stderr as Readable).on('data', (d: Buffer) => (log += d.toString()));
  const client = new Client({ name: 'operator-test', version: '1.0.0' });
  await client.connect(transport);
  await waitFor(() => log.includes('serving MCP over stdio'), 15_000, 'the start-up log');
  await client.close();
  return log;
}

describe('stdio start-up warnings about SVC_API_TOKEN', () => {
  it('an unknown token: a warning naming the data dir, never the token', async () => {
    const unknown = `svc_${'x'.repeat(43)}`;
    const log = await stdioStartLog(unknown);
    expect(log).toContain(`is not known in the data dir ${dataDir}`);
    expect(log).not.toContain(unknown);
  });

  it('a revoked token', async () => {
    const token = cliToken(dataDir, 'rita');
    const id = JSON.parse(runCli(['token', 'list', '--user', 'rita', '--json', '--data-dir', dataDir]).stdout)[0].id;
    expect(runCli(['token', 'revoke', id, '--data-dir', dataDir]).status).toBe(0);
    const log = await stdioStartLog(token);
    expect(log).toContain(`was revoked in the data dir ${dataDir}`);
    expect(log).not.toContain(token);
  });

  it('an expired token', async () => {
    const token = cliToken(dataDir, 'ed', ['--expires-in', '1s']);
    await waitFor(
      () =>
        JSON.parse(runCli(['token', 'list', '--user', 'ed', '--json', '--data-dir', dataDir]).stdout)[0].state ===
        'expired',
      15_000,
      'the token to expire',
    );
    const log = await stdioStartLog(token);
    expect(log).toContain(`has expired in the data dir ${dataDir}`);
    expect(log).not.toContain(token);
  });

  it('a valid token: no warning', async () => {
    const token = cliToken(dataDir, 'val');
    const log = await stdioStartLog(token);
    expect(log).not.toContain('SVC_API_TOKEN');
    expect(log).not.toContain(token);
  });
});

describe('an unwritable data dir', () => {
  it('fails at start with the path and the fix', () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'not a folder');
    const bad = join(file, 'data');
    for (const args of [
      ['serve', '--data-dir', bad],
      ['serve', '--http', '--port', '0', '--data-dir', bad],
      ['token', 'create', '--user', 'x', '--data-dir', bad],
    ]) {
      const out = runCli(args);
      expect(out.status, args.join(' ')).toBe(1);
      expect(out.stderr).toContain(`cannot write the data dir ${bad}`);
      expect(out.stderr).toContain('Fix:');
      expect(out.stderr).toContain('--data-dir');
    }
  });
});

describe('HTTP: failed authentications and cancellations are logged, never a token', () => {
  let server: SpawnedServer;
  let token: string;
  beforeAll(async () => {
    token = cliToken(dataDir, 'http-user');
    server = await spawnHttpServer(dataDir, ['--scripted-step-ms', '5000']);
  });
  afterAll(() => server.stop());

  it('logs a failed authentication with the address, not the token', async () => {
    const wrong = `svc_${'w'.repeat(43)}`;
    expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, wrong)).status).toBe(401);
    await waitFor(() => server.stderr().includes('authentication failed'), 10_000, 'the log line');
    const line = server
      .stderr()
      .split('\n')
      .find((l) => l.includes('authentication failed'))!;
    expect(JSON.parse(line)).toMatchObject({ address: expect.any(String), tokenPresented: true });
    expect(server.stderr()).not.toContain(wrong);
  });

  it("logs a workflow cancelled by its owner, and a client's cancellation notice", async () => {
    const project = await toolResult(server.mcpUrl, token, 'svc_create_project', { name: 'Cancel me' });
    const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build it',
      kind: 'build',
    });
    await toolResult(server.mcpUrl, token, 'svc_cancel_workflow', {
      projectId: project.id,
      workflowId: sent.workflowId,
    });
    await post(server.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, token);
    await waitFor(
      () =>
        server.stderr().includes('workflow cancelled by its owner') &&
        server.stderr().includes('client cancelled a request'),
      10_000,
      'the log lines',
    );
    const line = server
      .stderr()
      .split('\n')
      .find((l) => l.includes('workflow cancelled by its owner'))!;
    expect(JSON.parse(line)).toMatchObject({ user: 'http-user', projectId: project.id, workflowId: sent.workflowId });
    expect(server.stderr()).not.toContain(token);
  });
});
