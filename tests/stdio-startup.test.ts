/**
 * What a stdio start evaluates before it answers `initialize` (README "Start-up time"): the built
 * bin with `MBM_DEBUG_MODULES=1` lists the bundle's lazily evaluated modules it ran by its first
 * write to stdout. The HTTP side (transport, web console, update routes, QR codes), the MIME table,
 * Ajv, zod's other locales and the metrics (prom-client: a stdio server has none) are not among
 * them; the preview listener still starts, after the answer. The SDK `Server` is given this server's own JSON Schema validator, so the bundle's
 * stand-in for the SDK's Ajv validator (scripts/bundle.mjs) is never constructed.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { NO_SCHEMA_VALIDATOR } from '../src/mcp/no-schema-validator.js';
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
  it('answers initialize without evaluating the HTTP side, the console, QR codes, the MIME table or Ajv, and starts the preview listener after the answer', async () => {
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
    ];
    expect(trace.evaluated.filter((path) => unwanted.some((re) => re.test(path)))).toEqual([]);
    // The trace is written with the answer; the preview listener's line comes after it.
    expect(stderr.indexOf('serving MCP over stdio')).toBeGreaterThan(stderr.indexOf('{"lazyModulesEvaluated"'));
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
