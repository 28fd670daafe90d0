/**
 * What a stdio start evaluates before it answers `initialize` (docs/performance.md "Start-up time"): the built
 * bin with `MBM_DEBUG_MODULES=1` lists the bundles it loaded and their lazily evaluated modules it
 * ran by its first write to stdout. A plain stdio `serve` loads only the early bundle before its
 * answer; any other command line (here `--body-limit`) loads the main bundle first. The HTTP side (transport, web console, update routes, QR codes), the MIME table,
 * Ajv, zod's other locales and the metrics (prom-client: a stdio server has none) are not among
 * them; the preview listener still starts, after the answer. The SDK `Server` is given this server's own JSON Schema validator, so the bundle's
 * stand-in for the SDK's Ajv validator (scripts/bundle.mjs) is never constructed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { FORM_ANSWER_VALIDATOR } from '../src/mcp/form-answer-validator.js';
import { cliToken } from './bin-helpers.js';
import { BIN, ROOT, tempDir } from './helpers.js';

interface Trace {
  lazyModulesEvaluated: number;
  lazyModulesBundled: number;
  /** Absent before the early bundle existed: the main bundle was the only one. */
  bundlesLoaded?: string[];
  evaluated: string[];
}

/** Modules a stdio start has no use for before its answer. */
const UNWANTED = [
  /^dist\/transports\/(http-server|expo-updates-routes|artifact-routes)\.js$/,
  /^dist\/http-listener\.js$/,
  /^dist\/console\//,
  /^dist\/oauth\//,
  /^node_modules\/(qrcode|ajv|ajv-formats|mime-db|mime-types|express|prom-client)\//,
  /^dist\/metrics\//,
  /^node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)/,
  /^node_modules\/rate-limiter-flexible\/lib\/RateLimiter(Redis|Mongo|Postgres|MySQL|Cluster|Drizzle)/,
  // node-postgres: a SQLite start has no use for it.
  /^node_modules\/(pg|pg-[a-z-]+|postgres-[a-z]+)\//,
  /^dist\/store\/pg\//,
];

/** Spawns `serve` over stdio, sends initialize, and collects the answer, the module trace and the logs until the preview listener's line. */
async function startTraced(extra: string[] = []): Promise<{ answer: any; trace: Trace; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--data-dir',
      join(tempDir(), 'data'),
      '--port',
      '0',
      '--builder',
      'scripted',
      '--log-level',
      'info',
      ...extra,
    ],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', MBM_DEBUG_MODULES: '1', XDG_CACHE_HOME: tempDir() },
    },
  );
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`,
  );
  let stdout = '';
  let stderr = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stdout.includes('\n') && stderr.includes('serving MCP over stdio')) resolve();
      };
      child.stdout.on('data', (d) => {
        stdout += d;
        check();
      });
      child.stderr.on('data', (d) => {
        stderr += d;
        check();
      });
      child.once('exit', (code) => reject(new Error(`the bin exited (${code}): ${stderr}`)));
    });
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }
  const traceLine = stderr.split('\n').find((line) => line.startsWith('{"lazyModulesEvaluated"'));
  expect(traceLine).toBeDefined();
  return { answer: JSON.parse(stdout.slice(0, stdout.indexOf('\n'))), trace: JSON.parse(traceLine!) as Trace, stderr };
}

describe('stdio start-up loads only what answering needs', () => {
  it('a plain stdio serve answers initialize from the early bundle alone: no commander, SDK, zod, HTTP side, OAuth, console, QR codes, MIME table or Ajv', async () => {
    const { answer, trace, stderr } = await startTraced();
    expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: 'mobile-builder-mcp' } } });
    expect(trace.bundlesLoaded).toEqual(['dist/mobile-builder-early.cjs']);
    expect(trace.evaluated).toEqual([]);
    // What the early bundle evaluates at its load: our few files, no package.
    const stats = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle-stats.json'), 'utf8'));
    const early = Object.values(stats).find((b: any) => b.file === 'dist/mobile-builder-early.cjs') as {
      packages: string[];
      inputs: string[];
    };
    expect(early.packages).toEqual([]);
    expect(
      early.inputs.filter(
        (path) => UNWANTED.some((re) => re.test(path)) || /commander|zod|@modelcontextprotocol/.test(path),
      ),
    ).toEqual([]);
    expect(early.inputs.length).toBeLessThan(10);
    expect(stderr.indexOf('serving MCP over stdio')).toBeGreaterThan(stderr.indexOf('{"lazyModulesEvaluated"'));
  });

  it('any other stdio serve answers initialize without evaluating the HTTP side, the console, QR codes, the MIME table, Ajv or node-postgres, and starts the preview listener after the answer', async () => {
    const { answer, trace, stderr } = await startTraced(['--body-limit', '1048576']);
    expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: 'mobile-builder-mcp' } } });
    // The early bundle decides that the command line is not plain, then the main one starts it.
    expect(trace.bundlesLoaded).toEqual(['dist/mobile-builder-early.cjs', 'dist/mobile-builder-mcp.cjs']);
    expect(trace.lazyModulesEvaluated).toBeGreaterThan(0);
    expect(trace.lazyModulesEvaluated).toBeLessThan(trace.lazyModulesBundled);
    expect(trace.evaluated.filter((path) => UNWANTED.some((re) => re.test(path)))).toEqual([]);
    // The trace is written with the answer; the preview listener's line comes after it.
    expect(stderr.indexOf('serving MCP over stdio')).toBeGreaterThan(stderr.indexOf('{"lazyModulesEvaluated"'));
  });

  it("answers every message sent with the early-answered initialize, and that answer is the main bundle's byte for byte", async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: 'host', version: '1' },
      },
    });
    const rest = [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
      { jsonrpc: '2.0', id: 4, method: 'no/such/method' },
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'svc_list_projects', arguments: {} } },
    ];
    /** Spawns a stdio serve, writes everything at once, and returns its output lines once `count` came. */
    const exchange = async (extra: string[], text: string, count: number): Promise<string[]> => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'serve',
          '--data-dir',
          join(tempDir(), 'data'),
          '--port',
          '0',
          '--builder',
          'scripted',
          '--log-level',
          'warn',
          ...extra,
        ],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: tempDir(), MBM_DEBUG_MODULES: '1' },
        },
      );
      child.stdin.write(text);
      let stdout = '';
      let stderr = '';
      try {
        await new Promise<void>((resolve, reject) => {
          // The module trace (stderr) may come after the answers (stdout): another pipe.
          const check = () => {
            if (stdout.split('\n').length > count && stderr.includes('"bundlesLoaded"')) resolve();
          };
          child.stderr.on('data', (d) => {
            stderr += d;
            check();
          });
          child.stdout.on('data', (d) => {
            stdout += d;
            check();
          });
          child.once('exit', (code) => reject(new Error(`the bin exited (${code}): ${stderr}`)));
        });
      } finally {
        child.kill('SIGKILL');
        if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      }
      expect(stderr).not.toContain('differs');
      loaded.push(
        JSON.parse(stderr.split('\n').find((line) => line.startsWith('{"lazyModulesEvaluated"'))!).bundlesLoaded,
      );
      return stdout.split('\n').slice(0, count);
    };
    const loaded: unknown[] = [];
    const early = await exchange([], `${[initialize, ...rest.map((m) => JSON.stringify(m))].join('\n')}\n`, 5);
    expect(early.map((line) => JSON.parse(line).id)).toEqual([1, ...early.slice(1).map((line) => JSON.parse(line).id)]);
    expect(early.map((line) => JSON.parse(line).id).sort()).toEqual([1, 2, 3, 4, 5]);
    const byId = new Map(early.map((line) => [JSON.parse(line).id, JSON.parse(line)]));
    expect(byId.get(2).result.tools.length).toBeGreaterThan(5);
    expect(byId.get(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    expect(byId.get(4).error).toMatchObject({ code: -32601, message: 'Method not found: no/such/method' });
    expect(byId.get(5).error).toMatchObject({ code: -32001 });
    // The same initialize through the main bundle alone (a command line that is not plain).
    const [main] = await exchange(['--body-limit', '1048576'], `${initialize}\n`, 1);
    expect(early[0]).toBe(main);
    expect(loaded).toEqual([
      ['dist/mobile-builder-early.cjs'],
      ['dist/mobile-builder-early.cjs', 'dist/mobile-builder-mcp.cjs'],
    ]);
  });

  it('a plain stdio serve never loads what it does not use, to the end of its input: no OAuth or 2026-07-28 bundle, express, QR codes, MIME table, Ajv, other zod locales or node-postgres', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--data-dir',
        join(tempDir(), 'data'),
        '--port',
        '0',
        '--builder',
        'scripted',
        '--log-level',
        'info',
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', MBM_DEBUG_MODULES: '1', XDG_CACHE_HOME: tempDir() },
      },
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`,
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      // Once initialize is answered, the host's next messages; then the end of its input.
      if (stdout.split('\n').length === 2)
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`,
        );
      if (stdout.split('\n').length === 3) child.stdin.end();
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(stdout.split('\n')[1]!).result.tools.length).toBeGreaterThan(5);
    const atExit = JSON.parse(stderr.split('\n').find((line) => line.startsWith('{"atExit"'))!) as {
      bundlesLoaded: string[];
      bundlesRequired: string[];
      evaluated: string[];
    };
    expect(atExit.bundlesLoaded).toEqual(['dist/mobile-builder-early.cjs', 'dist/mobile-builder-mcp.cjs']);
    expect(atExit.bundlesRequired).toEqual([]);
    // The preview listener (the HTTP side and the console) is used: it serves the previews.
    expect(atExit.evaluated).toContain('dist/http-listener.js');
    const unused = [
      /^node_modules\/(qrcode|ajv|ajv-formats|mime-db|mime-types|express|prom-client)\//,
      /^dist\/(oauth|metrics)\//,
      /^node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)/,
      /^node_modules\/(pg|pg-[a-z-]+|postgres-[a-z]+)\//,
      /^dist\/store\/pg\//,
    ];
    expect(atExit.evaluated.filter((path) => unused.some((re) => re.test(path)))).toEqual([]);
  });

  it('leaves a command line with a bad value to commander: it exits with its message before answering anything', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', join(tempDir(), 'data'), '--port', 'abc'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: tempDir(), MBM_DEBUG_MODULES: '1' },
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`,
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(
      "error: option '--port <port>' argument 'abc' is invalid. --port must be a whole number of at least 0",
    );
    expect(stdout).toBe('');
    // The early bundle was asked, and left the command line to the main one (nothing was written: no trace).
    expect(stderr).not.toContain('lazyModulesEvaluated');
    expect(existsSync(join(ROOT, 'dist', 'mobile-builder-early.cjs'))).toBe(true);
  });

  it('answers initialize before it opens the store and before it tries the build sandbox', async () => {
    // A stand-in `bwrap` first on PATH: the sandbox probe runs it, and it records whether the
    // answer to initialize had reached this test by then (the test writes `answered` on receipt).
    // The probe waits for that file: a probe made before the answer would wait until its own
    // timeout, with `answered` still missing.
    const bin = tempDir();
    const answered = join(bin, 'answered');
    const order = join(bin, 'order');
    writeFileSync(
      join(bin, 'bwrap'),
      `#!/bin/sh\ni=0\nwhile [ ! -e '${answered}' ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done\nif [ -e '${answered}' ]; then echo after > '${order}'; else echo before > '${order}'; fi\nexit 0\n`,
      { mode: 0o755 },
    );
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--data-dir',
        join(tempDir(), 'data'),
        '--port',
        '0',
        '--builder',
        'scripted',
        '--log-level',
        'info',
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: `${bin}:${process.env.PATH ?? ''}`, MBM_DEBUG_MODULES: '1', XDG_CACHE_HOME: tempDir() },
      },
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`,
    );
    let stdout = '';
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          stdout += d;
          if (stdout.includes('\n') && !existsSync(answered)) writeFileSync(answered, '');
        });
        child.stderr.on('data', (d) => {
          stderr += d;
          if (stderr.includes('serving MCP over stdio') && /builds (NOT )?sandboxed/.test(stderr)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the bin exited (${code}): ${stderr}`)));
      });
    } finally {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    }
    expect(JSON.parse(stdout.slice(0, stdout.indexOf('\n')))).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'mobile-builder-mcp' } },
    });
    expect(readFileSync(order, 'utf8').trim()).toBe('after');
    expect(stderr).toContain('builds sandboxed (bubblewrap)');
    // The store is opened after the answer: the token check, which reads it, logs after the trace.
    const trace = stderr.indexOf('{"lazyModulesEvaluated"');
    expect(trace).toBeGreaterThanOrEqual(0);
    expect(stderr.indexOf('SVC_API_TOKEN is not set')).toBeGreaterThan(trace);
  });

  it('answers a first message other than initialize, which opens the store itself', async () => {
    const dataDir = join(tempDir(), 'data');
    const token = cliToken(dataDir, 'first');
    const answers = async (first: unknown) => {
      const child = spawn(
        process.execPath,
        [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--builder', 'scripted', '--log-level', 'warn'],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: token, XDG_CACHE_HOME: tempDir() },
        },
      );
      child.stdin.write(`${JSON.stringify(first)}\n`);
      let stdout = '';
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d) => {
            stdout += d;
            if (stdout.includes('\n')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`the bin exited (${code})`)));
        });
      } finally {
        child.kill('SIGKILL');
        if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      }
      return JSON.parse(stdout.slice(0, stdout.indexOf('\n')));
    };
    const listed = await answers({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'svc_list_projects', arguments: {} },
    });
    expect(listed).toMatchObject({ id: 7, result: { structuredContent: { projects: [] } } });
    const tools = await answers({ jsonrpc: '2.0', id: 8, method: 'tools/list' });
    expect(tools.result.tools.map((t: { name: string }) => t.name)).toContain('svc_get_session');
    // A 2026-07-28 request needs the tools before its admission.
    const modern = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const discovered = await answers({ jsonrpc: '2.0', id: 9, method: 'server/discover', params: { _meta: modern } });
    expect(discovered).toMatchObject({ id: 9, result: expect.anything() });
  });

  it('leaves Ajv, express and zod locales other than English out of the stdio bundle', () => {
    const stats = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle-stats.json'), 'utf8'));
    const stdio = Object.values(stats).find((b: any) => b.file === 'dist/mobile-builder-mcp.cjs') as {
      packages: string[];
    };
    expect(stdio.packages).not.toContain('ajv');
    expect(stdio.packages).not.toContain('express');
    const source = readFileSync(join(ROOT, 'dist', 'mobile-builder-mcp.cjs'), 'utf8');
    expect(source).toContain('zod locale de is left out');
    expect(source).not.toContain('Ung\\xFCltige Eingabe');
  });

  it("gives the SDK Server this server's own JSON Schema validator, which checks an answer to its own forms", () => {
    const { legacy } = createMcpServer('0.0.0');
    expect((legacy as unknown as { _jsonSchemaValidator: unknown })._jsonSchemaValidator).toBe(FORM_ANSWER_VALIDATOR);
    const check = FORM_ANSWER_VALIDATOR.getValidator({
      type: 'object',
      properties: { answer: { type: 'string', enum: ['red', 'blue'] } },
      required: ['answer'],
    });
    expect(check({ answer: 'blue' })).toMatchObject({ valid: true, data: { answer: 'blue' } });
    expect(check({ answer: 'green' })).toMatchObject({
      valid: false,
      errorMessage: 'answer must be one of the options',
    });
    expect(check({})).toMatchObject({ valid: false, errorMessage: 'answer is required' });
    expect(check({ answer: 1 })).toMatchObject({ valid: false });
    expect(check({ answer: 'red', other: 'x' })).toMatchObject({ valid: false });
  });
});
