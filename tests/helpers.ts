/**
 * Test helpers: a real server (real SQLite file with the real migrations, real HTTP listener on
 * port 0), real SDK clients, and raw HTTP requests. Nothing of our own server is mocked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, listenHttp, type App, type AppConfig } from '../src/app.js';
import { silentLogger } from '../src/logger.js';
import { displayPrefix, generateToken, hashToken } from '../src/auth/api-token.js';
import type { Store } from '../src/store/store.js';
import { sqliteOf } from './store-access.js';
import { randomUUID } from 'node:crypto';
import { perRequestSignalFetch } from './per-request-signal-fetch.js';
import type { HttpServerOptions, RunningHttpServer } from '../src/transports/http-server.js';

export interface TestServer {
  app: App;
  http: RunningHttpServer;
  dataDir: string;
  mcpUrl: string;
  /** Issues a token for `user` (creating the user). */
  token(user: string): string;
  close(): Promise<void>;
}

export function tempDir(prefix = 'mbm-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Limits high enough that polling tests never meet them; limit tests pass `DEFAULT_PLANS` instead. */
export const GENEROUS_PLANS = {
  free: {
    requestsPerMinute: 1_000_000,
    projectCreationsPerHour: 1_000_000,
    maxProjects: 1_000_000,
    maxRunningWorkflows: 1_000_000,
    maxQueuedWorkflows: 1_000_000,
  },
};

/** Starts the whole service in this process on a free port (generous limits unless `config.plans` says otherwise). */
export async function startTestServer(
  config: Partial<AppConfig> = {},
  http: Partial<HttpServerOptions> = {},
): Promise<TestServer> {
  const dataDir = config.dataDir ?? tempDir();
  const app = await createApp({
    dataDir,
    logger: silentLogger(),
    builder: 'scripted',
    scriptedStepMs: 20,
    pollIntervalMs: 50,
    plans: GENEROUS_PLANS,
    ...config,
  });
  await app.start();
  const server = await listenHttp(app, { host: '127.0.0.1', port: 0, serveMcp: true, ...http });
  return {
    app,
    http: server,
    dataDir,
    mcpUrl: `${server.url}/mcp`,
    token: (user) => issueToken(app.store, user),
    async close() {
      await server.close();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Issues an API token for `user` (created on the free plan when new), synchronously, by SQL: what
 * `TokenService.create` stores (the tests of that service call it themselves).
 */
function issueToken(store: Store, user: string): string {
  const db = sqliteOf(store);
  const now = new Date().toISOString();
  let row = db.prepare('select id from users where name = ?').get(user) as { id: string } | undefined;
  if (!row) {
    row = { id: randomUUID() };
    db.prepare("insert into users (id, name, plan, created_at) values (?, ?, 'free', ?)").run(row.id, user, now);
  }
  const token = generateToken();
  db.prepare(
    'insert into api_tokens (id, user_id, token_hash, display_prefix, created_at, expires_at, revoked_at) values (?, ?, ?, ?, ?, null, null)',
  ).run(randomUUID(), row.id, hashToken(token), displayPrefix(token), now);
  return token;
}

/** A connected SDK client over streamable HTTP with a Bearer token. */
export async function httpClient(mcpUrl: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
    // One abort listener per request in flight, not one per request until GC (a long poll warned at 1,501).
    fetch: perRequestSignalFetch,
  });
  await client.connect(transport);
  return client;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** A JSON-RPC body in a few words, for a hang's message: its method and tool, or its length. */
function describeBody(body: unknown): string {
  if (typeof body === 'string') return `(${body.length} characters)`;
  const message = body as { method?: string; params?: { name?: string } } | null;
  return [message?.method, message?.params?.name].filter(Boolean).join(' ') || '(a batch)';
}

/** POSTs a body (object or raw string) to the MCP endpoint. */
export async function post(
  mcpUrl: string,
  body: unknown,
  token?: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const request = async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(token !== undefined && { Authorization: `Bearer ${token}` }),
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { res, text: await res.text() };
  };
  const { res, text } = await bounded(`POST ${mcpUrl} ${describeBody(body)}`, request());
  let json: any;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

let nextId = 1;
/** Calls a tool with a raw JSON-RPC request. */
export function callTool(
  mcpUrl: string,
  token: string | undefined,
  name: string,
  args?: unknown,
): Promise<RawResponse> {
  return post(
    mcpUrl,
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name, ...(args !== undefined && { arguments: args }) },
    },
    token,
  );
}

/** The structured result of a successful raw tool call; throws with the body otherwise. */
export async function toolResult(mcpUrl: string, token: string, name: string, args?: unknown): Promise<any> {
  const res = await callTool(mcpUrl, token, name, args);
  if (res.status !== 200 || !res.json?.result) throw new Error(`${name} failed: ${res.status} ${res.text}`);
  return res.json.result.structuredContent;
}

/**
 * The JSON-RPC error inside an SDK client's rejection: an `McpError` with the code and
 * "MCP error <code>: <message>" (stdio, and HTTP errors the server sends with status 200 to an
 * MCP client), or, for a reply the server refuses with a non-2xx status (401, transport refusals),
 * `StreamableHTTPError(status, "Error POSTing to endpoint: <body>")`.
 */
export function rpcErrorOf(error: unknown): { status?: number; code: number; message: string; data?: any } {
  const e = error as { code?: number; message: string; data?: unknown };
  const marker = 'Error POSTing to endpoint: ';
  const at = e.message.indexOf(marker);
  if (at !== -1) {
    const body = JSON.parse(e.message.slice(at + marker.length));
    return { status: e.code, ...body.error };
  }
  const m = /^MCP error (-?\d+): (.*)$/s.exec(e.message);
  if (m) return { code: Number(m[1]), message: m[2]!, data: e.data };
  throw error;
}

/**
 * Runs a command to completion without blocking the test worker (a worker blocked for a minute
 * cannot answer vitest's own RPC). Never rejects: a spawn failure is reported as status null.
 */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ status: null, stdout, stderr: stderr + String(error) });
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** True while process `pid` exists and is not a zombie (Linux `/proc`). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The McpError an SDK client call rejects with (fails the test for anything else). */
export async function mcpError(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error('the call did not fail');
}

/**
 * Least budget of a `waitFor`, whatever its caller says. A wait's budget is a hang guard, not a
 * timing assertion (tests wait on states, never on the clock): on a machine busy with other work a
 * state that takes 1 s on a quiet one may take 30, and only a hang should fail the test.
 */
const WAIT_GUARD_MS = 120_000;

/**
 * Awaits `work` under the hang guard and names it when it hangs: past `WAIT_GUARD_MS` it fails with
 * "<what>: no result in 120 s", where the test's own limit would name no step. For the awaits that
 * have no bound of their own (a `fetch` to a server, Playwright's `newPage` and `close`).
 * @throws the error of `work`, or the hang error.
 */
export async function bounded<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result in ${WAIT_GUARD_MS / 1000} s`)), WAIT_GUARD_MS);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `check` until it returns a truthy value, or fails after `timeoutMs` (a hang guard: at
 * least `WAIT_GUARD_MS`).
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + Math.max(timeoutMs, WAIT_GUARD_MS);
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A project created through the tool, returned as the Project object. */
export function createProject(mcpUrl: string, token: string, args: Record<string, unknown> = {}): Promise<any> {
  return toolResult(mcpUrl, token, 'svc_create_project', { name: 'App', ...args });
}

/** Waits until the project's session has no active or queued workflow; returns the session. */
export function waitIdle(mcpUrl: string, token: string, projectId: string, timeoutMs = 20_000): Promise<any> {
  return waitFor(
    async () => {
      const s = await toolResult(mcpUrl, token, 'svc_get_session', { projectId });
      return s.hasActiveWorkflows ? null : s;
    },
    timeoutMs,
    'the session to become idle',
  );
}

/** Waits until the session has a pending question; returns the session. */
export function waitQuestion(mcpUrl: string, token: string, projectId: string, timeoutMs = 20_000): Promise<any> {
  return waitFor(
    async () => {
      const s = await toolResult(mcpUrl, token, 'svc_get_session', { projectId });
      return s.pendingQuestion ? s : null;
    },
    timeoutMs,
    'a pending question',
  );
}

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'mobile-builder-mcp.js');

/**
 * `dns.lookup` that resolves `*.localhost` to loopback as browsers do (RFC 6761 "localhost"), so
 * tests reach a project's own artifact origin (`http://<project-id>.localhost:<port>/`).
 */
function loopbackLookup(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  lookup(hostname, options, callback);
}

/** A request through `node:http`, which (unlike fetch) lets a test set any Host header; `*.localhost` names reach loopback. */
export function rawHttp(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false, lookup: loopbackLookup },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: body.toString('utf8'), body });
        });
      },
    );
    req.on('error', reject);
    if (options.body) req.write(options.body);
    req.end();
  });
}

/** Live (not zombie) processes of this machine whose command line holds `marker` (sandboxed ones included). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
