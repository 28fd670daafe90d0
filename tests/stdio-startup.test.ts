/**
 * What a stdio start evaluates before it answers `initialize` (README "Start-up time"): the built
 * bin with `MBM_DEBUG_MODULES=1` lists the bundle's lazily evaluated modules it ran by its first
 * write to stdout. The HTTP side (transport, web console, update routes, QR codes), the MIME table,
 * Ajv, zod's other locales and the metrics (prom-client: a stdio server has none) are not among
 * them; the preview listener still starts, after the answer. The SDK `Server` is given this server's own JSON Schema validator, so the bundle's
 * stand-in for the SDK's Ajv validator (scripts/bundle.mjs) is never constructed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { NO_SCHEMA_VALIDATOR } from '../src/mcp/no-schema-validator.js';
import { cliToken } from './bin-helpers.js';
import { BIN, ROOT, tempDir } from './helpers.js';

interface Trace {
  lazyModulesEvaluated: number;
  lazyModulesBundled: number;
  evaluated: string[];
}

/** Spawns `serve` over stdio, sends initialize, and collects the answer, the module trace and the logs until the preview listener's line. */
async function startTraced(): Promise<{ answer: any; trace: Trace; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', join(tempDir(), 'data'), '--port', '0', '--builder', 'scripted', '--log-level', 'info'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', MBM_DEBUG_MODULES: '1', XDG_CACHE_HOME: tempDir() },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`);
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
  it('answers initialize without evaluating the HTTP side, the console, QR codes, the MIME table, Ajv or node-postgres, and starts the preview listener after the answer', async () => {
    const { answer, trace, stderr } = await startTraced();
    expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: 'mobile-builder-mcp' } } });
    expect(trace.lazyModulesEvaluated).toBeGreaterThan(0);
    expect(trace.lazyModulesEvaluated).toBeLessThan(trace.lazyModulesBundled);
    const unwanted = [
      /^dist\/transports\/(http-server|expo-updates-routes|artifact-routes)\.js$/,
      /^dist\/http-listener\.js$/,
      /^dist\/console\//,
      /^node_modules\/(qrcode|ajv|ajv-formats|mime-db|mime-types|express|prom-client)\//,
      /^dist\/metrics\//,
      /^node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)/,
      /^node_modules\/rate-limiter-flexible\/lib\/RateLimiter(Redis|Mongo|Postgres|MySQL|Cluster|Drizzle)/,
      // node-postgres: a SQLite start has no use for it.
      /^node_modules\/(pg|pg-[a-z-]+|postgres-[a-z]+)\//,
      /^dist\/store\/pg\//,
    ];
    expect(trace.evaluated.filter((path) => unwanted.some((re) => re.test(path)))).toEqual([]);
    // The trace is written with the answer; the preview listener's line comes after it.
    expect(stderr.indexOf('serving MCP over stdio')).toBeGreaterThan(stderr.indexOf('{"lazyModulesEvaluated"'));
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
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', join(tempDir(), 'data'), '--port', '0', '--builder', 'scripted', '--log-level', 'info'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: `${bin}:${process.env.PATH ?? ''}`, MBM_DEBUG_MODULES: '1', XDG_CACHE_HOME: tempDir() },
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`);
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
    expect(JSON.parse(stdout.slice(0, stdout.indexOf('\n')))).toMatchObject({ id: 1, result: { serverInfo: { name: 'mobile-builder-mcp' } } });
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
      const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--builder', 'scripted', '--log-level', 'warn'], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: token, XDG_CACHE_HOME: tempDir() },
      });
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
    const listed = await answers({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'svc_list_projects', arguments: {} } });
    expect(listed).toMatchObject({ id: 7, result: { structuredContent: { projects: [] } } });
    const tools = await answers({ jsonrpc: '2.0', id: 8, method: 'tools/list' });
    expect(tools.result.tools.map((t: { name: string }) => t.name)).toContain('svc_get_session');
    // A 2026-07-28 request needs the tools before its admission.
    const modern = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const discovered = await answers({ jsonrpc: '2.0', id: 9, method: 'server/discover', params: { _meta: modern } });
    expect(discovered).toMatchObject({ id: 9, result: expect.anything() });
  });

  it('leaves Ajv, express and zod locales other than English out of the stdio bundle', () => {
    const stats = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle-stats.json'), 'utf8'));
    const stdio = Object.values(stats).find((b: any) => b.file === 'dist/mobile-builder-mcp.cjs') as { packages: string[] };
    expect(stdio.packages).not.toContain('ajv');
    expect(stdio.packages).not.toContain('express');
    const source = readFileSync(join(ROOT, 'dist', 'mobile-builder-mcp.cjs'), 'utf8');
    expect(source).toContain('zod locale de is left out');
    expect(source).not.toContain('Ung\\xFCltige Eingabe');
  });

  it("gives the SDK Server this server's own JSON Schema validator, which is never asked for one (no elicitation)", () => {
    const { legacy } = createMcpServer('0.0.0');
    expect((legacy as unknown as { _jsonSchemaValidator: unknown })._jsonSchemaValidator).toBe(NO_SCHEMA_VALIDATOR);
    expect(() => NO_SCHEMA_VALIDATOR.getValidator({ type: 'object' })).toThrow(/no elicitation/);
  });
});
