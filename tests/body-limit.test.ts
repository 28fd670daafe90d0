/**
 * `--body-limit` bounds one message on both transports of the built bin (docs/cli.md#command-line,
 * docs/contract.md#limits-and-plans): an HTTP body over it is answered 413, a stdio line over it
 * gets the same JSON-RPC error, and the next line is served.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { BIN, tempDir, waitFor } from './helpers.js';

const LIMIT = 2000;

/** A `tools/call` message of about `bytes` bytes. */
function message(id: number, bytes: number): string {
  const text = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'svc_create_project', arguments: { name: '' } },
  });
  return text.replace('"name":""', `"name":"${'x'.repeat(bytes - text.length)}"`);
}

describe('--body-limit', () => {
  let http: SpawnedServer | undefined;
  afterAll(() => http?.stop());

  it('refuses a stdio line over the limit with the error HTTP gives a body over it, and serves the next line', async () => {
    http = await spawnHttpServer(tempDir(), ['--body-limit', String(LIMIT)], { SVC_LOG_LEVEL: 'silent' });
    const over = message(1, LIMIT + 500);
    expect(Buffer.byteLength(over)).toBeGreaterThan(LIMIT);
    const res = await fetch(http.mcpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: over,
    });
    expect(res.status).toBe(413);
    const overHttp = (await res.json()) as Record<string, unknown>;
    expect(overHttp).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, data: { reason: 'body_too_large', limitBytes: LIMIT } },
    });

    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--data-dir', tempDir(), '--port', '0', '--builder', 'scripted', '--body-limit', String(LIMIT)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, SVC_LOG_LEVEL: 'silent' },
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Under the limit: read and answered (-32001, no token); over it: refused unread; then a ping.
    const under = message(3, LIMIT - 100);
    child.stdin.write(`${over}\n${under}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`);
    await waitFor(
      () => out.includes('"id":2') && out.includes('"id":3'),
      20_000,
      'the replies after the oversized line',
    );
    child.stdin.end();
    await exited;
    const replies = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: unknown });
    expect(replies[0]).toEqual(overHttp);
    expect(replies.find((r) => r.id === 3)).toMatchObject({ error: { code: -32001 } });
    expect(replies.find((r) => r.id === 2)).toMatchObject({ result: {} });
  });
});
