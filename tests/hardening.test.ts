/**
 * Hostile input at every edge gets a bounded answer and never reaches past its workflow
 * (docs/contract.md "Tokens and security" and "Limits and plans"): requests the SDK would leave unanswered,
 * deadlines, request slots, huge output lines, anonymous slow clients, publishing through links,
 * directive floods, preview growth and quota, process groups, and the small input faults.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SANDBOX_TURNED_OFF } from '../src/builders/process-sandbox.js';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../src/auth/api-token.js';
import { serveStdio } from '../src/transports/stdio-server.js';
import {
  BIN,
  callTool,
  createProject,
  post,
  rawHttp,
  startTestServer,
  tempDir,
  toolResult,
  waitFor,
  waitIdle,
  waitQuestion,
  type TestServer,
  processAlive as alive,
} from './helpers.js';
import { sqliteOf } from './store-access.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function withCommands(
  config: Record<string, unknown>,
  extra: Parameters<typeof startTestServer>[0] = {},
  http: Parameters<typeof startTestServer>[1] = {},
) {
  const dir = tempDir('mbm-hard-');
  const file = join(dir, 'builder.json');
  writeFileSync(file, JSON.stringify(config));
  server = await startTestServer(
    { builder: 'command', builderConfigFile: file, cancelTimeoutMs: 30_000, ...extra },
    http,
  );
  const token = server.token('alice');
  const project = await createProject(server.mcpUrl, token, { name: 'Hostile app' });
  return { token, project };
}

async function messagesOf(token: string, projectId: string): Promise<any[]> {
  const all: any[] = [];
  let after = 0;
  for (;;) {
    const page = await toolResult(server!.mcpUrl, token, 'svc_get_messages', { projectId, after, limit: 500 });
    all.push(...page.messages);
    if (!page.hasMore) return all;
    after = page.nextAfter;
  }
}

const ODD_META = [null, {}, [], 1.5, true];

/** A path in a fresh temp folder: the command of `ignoresTermUntil` ends once a file is written there. */
function stopFile(): string {
  return join(tempDir('mbm-stop-'), 'stop');
}

/**
 * A build command that ignores SIGTERM (so a cancel stays `cancelling` until the kill grace ends)
 * and ends by itself once `stop` exists: the test writes it after its assertions, so closing the
 * server does not wait out the grace period. The builder config shows the stop file's folder to
 * the sandboxed build read-only (`sandbox.readOnlyPaths`).
 */
function ignoresTermUntil(stop: string): string {
  return `trap '' TERM; echo trap-is-set; while [ ! -e '${stop}' ]; do sleep 0.2; done`;
}

describe('every message gets an answer', () => {
  it('over HTTP: an unrouted method with any progressToken, and a message with both method and result, are answered at once', async () => {
    server = await startTestServer({}, { maxConcurrentRequests: 4 });
    const token = server.token('alice');
    for (const progressToken of ODD_META) {
      const res = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: 7, method: 'resources/list', params: { _meta: { progressToken } } },
        token,
      );
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        id: 7,
        error: {
          code: -32602,
          message: 'Invalid parameter: params._meta.progressToken must be a string or an integer',
        },
      });
    }
    const unknown = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 8, method: 'resources/list', params: { _meta: { progressToken: 'p1' } } },
      token,
    );
    expect(unknown.json).toMatchObject({ id: 8, error: { code: -32601, message: 'Method not found: resources/list' } });
    const both = await post(server.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'ping', result: {} }, token);
    expect(both.status).toBe(400);
    expect(both.json).toMatchObject({ id: 9, error: { code: -32600 } });
    // Far more such requests than there are slots: none holds one, so the server still answers.
    const many = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post(
          server!.mcpUrl,
          {
            jsonrpc: '2.0',
            id: i,
            method: `x/${i}`,
            params: { _meta: { progressToken: ODD_META[i % ODD_META.length] } },
          },
          token,
        ),
      ),
    );
    expect(many.every((r) => r.status === 400 || r.status === 404 || r.status === 429)).toBe(true);
    const ok = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, token);
    expect(ok.status).toBe(200);
    expect((await rawHttp(server.http.url + '/healthz')).status).toBe(200);
  });

  it('over stdio: the same messages are answered, and the server ends when its input ends', async () => {
    server = await startTestServer();
    const token = server.token('alice');
    const input = new PassThrough();
    const output = new PassThrough();
    const replies: any[] = [];
    let buffered = '';
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        replies.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    });
    const done = serveStdio(server.app, { token, input, output });
    ODD_META.forEach((progressToken, i) =>
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'foo/bar', params: { _meta: { progressToken } } })}\n`,
      ),
    );
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'both', method: 'ping', result: {} })}\n`);
    input.end();
    await done;
    expect(replies).toHaveLength(ODD_META.length + 1);
    expect(replies.filter((r) => r.error?.code === -32602)).toHaveLength(ODD_META.length);
    expect(replies.find((r) => r.id === 'both').error.code).toBe(-32600);
  });

  it('a request that outlives its deadline is answered -32603, and a client that goes away frees its slot', async () => {
    const stop = stopFile();
    const { token, project } = await withCommands(
      { build: { command: ignoresTermUntil(stop) }, killGraceMs: 5000, sandbox: { readOnlyPaths: [dirname(stop)] } },
      { requestDeadlineMs: 1000 },
      { maxConcurrentRequests: 1 },
    );
    const sent = await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
      kind: 'build',
    });
    await waitFor(
      async () => (await messagesOf(token, project.id)).some((m) => m.content.includes('trap-is-set')),
      20_000,
      'the build to ignore SIGTERM',
    );
    // The cancel waits for a command that ignores SIGTERM: it cannot finish within the 1 s deadline.
    const cancel = await callTool(server!.mcpUrl, token, 'svc_cancel_workflow', {
      projectId: project.id,
      workflowId: sent.workflowId,
    });
    expect(cancel.status).toBe(500);
    expect(cancel.json.error).toMatchObject({
      code: -32603,
      message: 'Internal error',
      data: { reason: 'deadline_exceeded' },
    });
    // The slot came back with the answer: the one-slot server admits the next request.
    expect((await post(server!.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'ping' }, token)).status).toBe(200);
    writeFileSync(stop, '');
  });

  it('a client that disconnects gives its slot back at once; /healthz says when no slot is free', async () => {
    const stop = stopFile();
    const { token, project } = await withCommands(
      { build: { command: ignoresTermUntil(stop) }, killGraceMs: 20_000, sandbox: { readOnlyPaths: [dirname(stop)] } },
      {},
      { maxConcurrentRequests: 1 },
    );
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build',
      kind: 'build',
    });
    await waitFor(
      async () => (await messagesOf(token, project.id)).some((m) => m.content.includes('trap-is-set')),
      20_000,
      'the build to ignore SIGTERM',
    );
    const aborter = new AbortController();
    const cancel = fetch(server!.mcpUrl, {
      method: 'POST',
      signal: aborter.signal,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_cancel_workflow', arguments: { projectId: project.id } },
      }),
    })
      .then(async (r) => `answered ${r.status} ${await r.text()}`)
      .catch(() => 'aborted');
    await waitFor(
      async () => (await rawHttp(server!.http.url + '/healthz')).status === 503,
      20_000,
      '/healthz to report no free slot',
    );
    const busy = await post(server!.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'ping' }, token);
    if (busy.status !== 429)
      throw new Error(`the slot was free before the client went away; the cancel was ${await cancel}`);
    expect(busy.json.error.data).toMatchObject({ scope: 'server', limit: 1 });
    aborter.abort();
    expect(await cancel).toBe('aborted');
    await waitFor(
      async () => (await rawHttp(server!.http.url + '/healthz')).status === 200,
      20_000,
      'the slot to come back',
    );
    expect(
      (await toolResult(server!.mcpUrl, token, 'svc_get_session', { projectId: project.id })).activeWorkflow.status,
    ).toBe('cancelling');
    writeFileSync(stop, '');
  });
});

describe('output that could exhaust memory', () => {
  it('a 200 MB output line is cut while it is read: the server lives, memory stays bounded, the next build works', async () => {
    const { token, project } = await withCommands({
      build: { command: 'head -c 200000000 /dev/zero | tr "\\0" a; echo; echo "after the long line"' },
    });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'flood',
      kind: 'build',
    });
    const idle = await waitIdle(server!.mcpUrl, token, project.id, 120_000);
    clearInterval(sampler);
    expect(idle.lastWorkflow.status).toBe('completed');
    const contents = (await messagesOf(token, project.id)).map((m) => m.content).join('\n');
    expect(contents).toContain('after the long line');
    expect(contents).toMatch(/bytes of over-long lines dropped/);
    expect(contents.length).toBeLessThan(100_000);
    // Holding the line whole would take 200 MB (400 MB as a string); the reader keeps 16 KiB of it.
    expect(peak - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('over stdio, an oversized line is refused with body_too_large without being held, and the next line is served', async () => {
    const dataDir = tempDir('mbm-stdio-');
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--builder', 'scripted'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, SVC_LOG_LEVEL: 'silent' },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    for (let i = 0; i < 100; i++) {
      if (!child.stdin.write(chunk)) await new Promise((r) => child.stdin.once('drain', r));
    }
    child.stdin.write('\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await waitFor(() => out.includes('"id":2'), 60_000, 'the ping after the oversized line');
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)![1]);
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    const replies = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(replies[0]).toMatchObject({ id: null, error: { code: -32600, data: { reason: 'body_too_large' } } });
    expect(replies[1]).toMatchObject({ id: 2, result: {} });
    // A 100 MiB line held whole would lift the peak far past this.
    expect(peakKb).toBeLessThan(200 * 1024);
  });
});

describe('anonymous and idle connections', () => {
  it('slow anonymous clients of one address cannot take the slots of authenticated ones; silent connections are closed', async () => {
    server = await startTestServer(
      {},
      { maxConcurrentRequests: 4, maxUnauthenticatedPerAddress: 8, headersTimeoutMs: 2000, requestTimeoutMs: 60_000 },
    );
    const token = server.token('alice');
    const url = new URL(server.http.url);
    const slow = Array.from({ length: 20 }, () => {
      const socket = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: '127.0.0.2' });
      socket.on('error', () => undefined);
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('connect', () =>
        socket.write(
          'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
        ),
      );
      return { socket, text: () => text };
    });
    // Past 8 pending requests from 127.0.0.2, the rest are refused at once with scope "client".
    await waitFor(
      () => slow.filter((s) => s.text().startsWith('HTTP/1.1 429')).length === 12,
      20_000,
      'refusals of the excess slow clients',
    );
    expect(slow.find((s) => s.text().startsWith('HTTP/1.1 429'))!.text()).toContain('"scope":"client"');
    // The authenticated client from another address is served meanwhile.
    for (let i = 0; i < 10; i++)
      expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: i, method: 'ping' }, token)).status).toBe(200);
    for (const s of slow) s.socket.destroy();

    const silent = connect({ port: Number(url.port), host: '127.0.0.1' });
    silent.on('error', () => undefined);
    let closed = false;
    silent.once('close', () => (closed = true));
    await waitFor(() => closed, 20_000, 'the server to close a connection that sends nothing');
  });
});

describe('publishing never leaves the published folder', () => {
  it('links to /etc/passwd and to the store are refused and never served; a link inside the folder is published; a linked folder outside is refused', async () => {
    const { token, project } = await withCommands({
      build: {
        command: [
          'mkdir -p dist && echo "<h1>ok</h1>" > dist/index.html',
          'ln -sf /etc/passwd dist/passwd',
          'ln -sf "$SVC_WORKSPACE/../../mobile-builder.db" dist/db',
          'ln -sf index.html dist/home.html',
          'ln -sfn /etc dist/etc',
          'echo "::preview web dist"',
          'ln -sfn /etc out',
          'echo "::preview web out"',
        ].join('\n'),
      },
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'links',
      kind: 'build',
    });
    const idle = await waitIdle(server!.mcpUrl, token, project.id);
    expect(idle.lastWorkflow.status).toBe('failed');
    expect(idle.lastWorkflow.error).toMatchObject({
      code: 'protocol_error',
      message: 'Artifact folder out is outside the workspace',
    });
    const preview = idle.previewUrls.find((p: any) => p.kind === 'preview');
    expect((await rawHttp(preview.url)).text).toContain('<h1>ok</h1>');
    expect((await rawHttp(preview.url + 'home.html')).text).toContain('<h1>ok</h1>');
    for (const leak of ['passwd', 'db', 'etc/passwd', 'etc/hostname'])
      expect((await rawHttp(preview.url + leak)).status).toBe(404);
    const contents = (await messagesOf(token, project.id)).map((m) => m.content).join('\n');
    expect(contents).toMatch(/Not published .*passwd/);
    expect(contents).not.toContain(server!.dataDir);
  });
});

describe('directive floods and preview growth', () => {
  it('directives count against the output cap, and a workflow publishes at most 20 artifacts', async () => {
    const { token, project } = await withCommands({
      build: { command: 'i=0; while [ $i -lt 5000 ]; do echo "::message m$i"; i=$((i+1)); done; echo "::result done"' },
      deploy: {
        command: 'i=0; while [ $i -lt 3000 ]; do echo "::preview-url web https://example.com/$i"; i=$((i+1)); done',
      },
      maxOutputLines: 100,
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'flood',
      kind: 'build',
    });
    await waitIdle(server!.mcpUrl, token, project.id, 60_000);
    const messages = await messagesOf(token, project.id);
    expect(messages.filter((m) => /^m\d+$/.test(m.content)).length).toBe(100);
    expect(messages.some((m) => m.content.includes('output truncated'))).toBe(true);

    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'flood urls',
      kind: 'deploy',
    });
    const idle = await waitIdle(server!.mcpUrl, token, project.id, 60_000);
    expect(idle.lastWorkflow.error).toMatchObject({ code: 'protocol_error' });
    expect(idle.lastWorkflow.previewUrls.length).toBeLessThanOrEqual(20);
    expect(JSON.stringify(idle).length).toBeLessThan(20_000);
  });

  it('a preview page embeds a bounded history, old previews are removed, and a full artifact quota fails with a clear error', async () => {
    server = await startTestServer({ scriptedStepMs: 1 });
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token);
    const long = 'x'.repeat(5000);
    for (let i = 0; i < 13; i++) {
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: `${i} ${long}`,
        kind: 'build',
      });
    }
    const idle = await waitIdle(server.mcpUrl, token, project.id, 120_000);
    const page = await rawHttp(idle.previewUrls.find((p: any) => p.kind === 'preview').url);
    expect(page.text.length).toBeLessThan(20 * 600 * 2 + 10_000);
    const previews = sqliteOf(server.app.store)
      .prepare("select count(*) as n from artifacts where kind = 'preview'")
      .get() as { n: number };
    expect(previews.n).toBe(10);
    expect(readdirSync(join(server.dataDir, 'artifacts')).length).toBe(10);

    await server.close();
    const dir = tempDir('mbm-quota-');
    writeFileSync(
      join(dir, 'builder.json'),
      JSON.stringify({
        build: { command: 'mkdir -p d && head -c 2000000 /dev/zero > d/big.bin && echo "::preview web d"' },
      }),
    );
    server = await startTestServer({
      builder: 'command',
      builderConfigFile: join(dir, 'builder.json'),
      plans: {
        free: { requestsPerMinute: 1_000_000, projectCreationsPerHour: 1000, maxProjects: 1000, artifactStorageMb: 1 },
      },
    });
    const t2 = server.token('bob');
    const p2 = await createProject(server.mcpUrl, t2);
    await toolResult(server.mcpUrl, t2, 'svc_send_message', { projectId: p2.id, message: 'big', kind: 'build' });
    const failed = await waitIdle(server.mcpUrl, t2, p2.id);
    expect(failed.lastWorkflow.error.code).toBe('artifact_quota_exceeded');
    expect(failed.lastWorkflow.error.message).toMatch(/artifact storage is full/);
    expect(existsSync(join(server.dataDir, 'artifacts')) ? readdirSync(join(server.dataDir, 'artifacts')) : []).toEqual(
      [],
    );
  });
});

describe('build processes never outlive their workflow', () => {
  it('a child that ignores SIGTERM is killed when the command exits', async () => {
    const { token, project } = await withCommands(
      {
        build: { command: 'sh -c \'trap "" TERM; exec sleep 1000\' & echo $! > child.pid; echo started' },
        killGraceMs: 200,
      },
      { buildSandbox: SANDBOX_TURNED_OFF },
    ); // unsandboxed: the pid it writes is a pid of this machine
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'orphan',
      kind: 'build',
    });
    const idle = await waitIdle(server!.mcpUrl, token, project.id);
    expect(idle.lastWorkflow.status).toBe('completed');
    const pid = Number(readFileSync(join(server!.dataDir, 'workspaces', project.id, 'child.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(1);
    expect(alive(pid)).toBe(false);
  });

  it('a grace period above the cap is refused when the config is read', async () => {
    const dir = tempDir('mbm-grace-');
    writeFileSync(join(dir, 'builder.json'), JSON.stringify({ build: { command: 'true' }, killGraceMs: 60_000 }));
    await expect(startTestServer({ builder: 'command', builderConfigFile: join(dir, 'builder.json') })).rejects.toThrow(
      /killGraceMs/,
    );
  });
});

describe('small input faults', () => {
  it('an upper-case UUID finds the project; NUL is refused with -32602 and stores nothing', async () => {
    server = await startTestServer();
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token);
    const got = await toolResult(server.mcpUrl, token, 'svc_get_project', { projectId: project.id.toUpperCase() });
    expect(got.id).toBe(project.id);
    const nul = await callTool(server.mcpUrl, token, 'svc_create_project', { name: 'a\u0000b' });
    expect(nul.json.error).toMatchObject({
      code: -32602,
      message: 'Invalid parameter: name must not contain NUL characters',
    });
    const msg = await callTool(server.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'x\u0000' });
    expect(msg.json.error.code).toBe(-32602);
    expect((await toolResult(server.mcpUrl, token, 'svc_list_projects')).projects).toHaveLength(1);
  });

  it('token lifetimes are bounded, and a long expiry is compared as a time, not as text', async () => {
    expect(() => parseDuration('500000w')).toThrow(/at most 3650d/);
    expect(parseDuration('3650d')).toBe(3650 * 86_400_000);
    server = await startTestServer();
    const { token } = await server.app.tokens.create('alice', parseDuration('3650d'));
    expect((await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, token)).status).toBe(200);
    await expect(server!.app.tokens.create('alice', 500000 * 604_800_000)).rejects.toThrow(RangeError);
  });

  it('failure messages and output never show server paths', async () => {
    const { token, project } = await withCommands({
      build: { command: 'echo "working in $PWD"; cd /nonexistent-dir-for-test' },
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'paths',
      kind: 'build',
    });
    await waitIdle(server!.mcpUrl, token, project.id);
    const contents = (await messagesOf(token, project.id)).map((m) => m.content).join('\n');
    expect(contents).toContain('working in <workspace>');
    expect(contents).toContain('…/nonexistent-dir-for-test');
    expect(contents).not.toContain(server!.dataDir);
  });

  it('half-copied artifact folders left by a kill are removed at start', async () => {
    const dataDir = tempDir('mbm-tmp-');
    mkdirSync(join(dataDir, 'artifacts', '.tmp-abc-def'), { recursive: true });
    writeFileSync(join(dataDir, 'artifacts', '.tmp-abc-def', 'x'), 'half');
    server = await startTestServer({ dataDir });
    expect(existsSync(join(dataDir, 'artifacts', '.tmp-abc-def'))).toBe(false);
  });

  it('a catastrophic-backtracking pattern is matched in linear time', async () => {
    const { token, project } = await withCommands({
      build: {
        command:
          'printf \'%s\\n\' \'::ask code {"prompt":"Code?","pattern":"(a+)+c"}\'; read answer; echo "::result got $answer"',
      },
    });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'ask',
      kind: 'build',
    });
    await waitQuestion(server!.mcpUrl, token, project.id);
    // A backtracking engine needs about 2^60 steps for this answer: the test would never end.
    const bad = await callTool(server!.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: `${'a'.repeat(60)}b`,
    });
    expect(bad.json.error).toMatchObject({ code: -32602 });
    await toolResult(server!.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'aaac' });
    expect((await waitIdle(server!.mcpUrl, token, project.id)).lastWorkflow.status).toBe('completed');
  });
});

describe('soak: a flood of every hostile class, while a well-behaved client keeps being served', () => {
  it('for a bounded time, every request of the good client is answered within its deadline', async () => {
    const { token, project } = await withCommands(
      {
        build: {
          command:
            'i=0; while [ $i -lt 3000 ]; do echo "::message flood $i"; head -c 20000 /dev/zero | tr "\\0" b; echo; i=$((i+1)); done',
        },
        maxOutputLines: 500,
      },
      { requestDeadlineMs: 5000 },
      { maxConcurrentRequests: 16, maxUnauthenticatedPerAddress: 8, headersTimeoutMs: 2000, requestTimeoutMs: 5000 },
    );
    const good = server!.token('good');
    const goodProject = await createProject(server!.mcpUrl, good, { name: 'Good' });
    const url = new URL(server!.http.url);
    const stopAt = Date.now() + 15_000;
    let stop = false;
    const sockets: import('node:net').Socket[] = [];

    const floods: Promise<unknown>[] = [
      // Unrouted methods with odd progress tokens, and ambiguous messages, with a valid token.
      (async () => {
        let i = 0;
        while (!stop) {
          await Promise.all(
            Array.from({ length: 20 }, () =>
              post(
                server!.mcpUrl,
                {
                  jsonrpc: '2.0',
                  id: i++,
                  method: 'x/y',
                  params: { _meta: { progressToken: ODD_META[i % ODD_META.length] } },
                },
                token,
              ).catch(() => null),
            ),
          );
        }
      })(),
      // Anonymous slow clients from another loopback address.
      (async () => {
        while (!stop) {
          for (let k = 0; k < 20; k++) {
            const socket = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: '127.0.0.3' });
            socket.on('error', () => undefined);
            socket.on('connect', () =>
              socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{'),
            );
            sockets.push(socket);
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      })(),
      // Bodies over the cap and unparsable ones.
      (async () => {
        while (!stop) {
          await post(server!.mcpUrl, 'x'.repeat(2 * 1024 * 1024), token).catch(() => null);
          await post(server!.mcpUrl, '{not json', token).catch(() => null);
        }
      })(),
      // Builds that flood output and directives.
      (async () => {
        while (!stop) {
          await callTool(server!.mcpUrl, token, 'svc_send_message', {
            projectId: project.id,
            message: 'flood',
            kind: 'build',
          }).catch(() => null);
          await new Promise((r) => setTimeout(r, 500));
        }
      })(),
    ];

    let answered = 0;
    while (Date.now() < stopAt) {
      const res = await fetch(server!.mcpUrl, {
        method: 'POST',
        signal: AbortSignal.timeout(30_000),
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${good}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: answered,
          method: 'tools/call',
          params: { name: 'svc_get_project', arguments: { projectId: goodProject.id } },
        }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).result.structuredContent.id).toBe(goodProject.id);
      answered++;
    }
    stop = true;
    await Promise.all(floods);
    for (const s of sockets) s.destroy();
    expect(answered).toBeGreaterThan(5);
    expect((await rawHttp(server!.http.url + '/healthz')).status).toBe(200);
  });
});
