// `npm run conformance`: runs the MCP conformance suite (@modelcontextprotocol/conformance) against
// the real server over streamable HTTP. The suite needs Node 22 and cannot send an Authorization
// header, so this script
//   1. installs Node 22 (the `node` package of the npm registry) and the suite into a scratch
//      folder, node_modules/.cache/mobile-builder-mcp-conformance (once; later runs reuse it),
//   2. starts `mobile-builder-mcp serve --http` on a fresh data dir with a test token,
//   3. puts a small local proxy in front of it that adds `Authorization: Bearer <token>` and
//      forwards everything else unchanged (Host and Origin included, so the server's DNS-rebinding
//      checks see what the suite sent),
//   4. runs the scenarios that apply to this server (docs/development.md "Conformance") and exits non-zero if
//      any fails.
// Needs the npm registry the first time. Not part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mobile-builder-mcp.js');
const SUITE_VERSION = '0.1.16';
/** The server scenarios that apply: see docs/development.md "Conformance" for the ones that do not, and why. */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const scratch = join(root, 'node_modules', '.cache', 'mobile-builder-mcp-conformance');
const node22 = join(scratch, 'node_modules', '.bin', 'node');
const suite = join(scratch, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
if (!existsSync(node22) || !existsSync(suite)) {
  mkdirSync(scratch, { recursive: true });
  console.error(`installing Node 22 and @modelcontextprotocol/conformance@${SUITE_VERSION} into ${scratch}`);
  const installed = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      scratch,
      '--no-audit',
      '--no-fund',
      '--no-save',
      'node@22',
      `@modelcontextprotocol/conformance@${SUITE_VERSION}`,
    ],
    { stdio: 'inherit' },
  );
  if (installed.status !== 0) process.exit(installed.status ?? 1);
}

const dataDir = mkdtempSync(join(tmpdir(), 'mbm-conformance-'));
const token = spawnSync(process.execPath, [BIN, 'token', 'create', '--user', 'conformance', '--data-dir', dataDir], {
  encoding: 'utf8',
})
  .stdout.trim()
  .split('\n')
  .at(-1);

const server = spawn(
  process.execPath,
  [BIN, 'serve', '--http', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const serverPort = await new Promise((resolve, reject) => {
  let log = '';
  server.stderr.on('data', (d) => {
    log += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (m) resolve(Number(m[1]));
  });
  server.once('exit', (code) => reject(new Error(`server exited (${code}): ${log}`)));
});

// The header-adding proxy: every request goes to the server as it came, plus the token.
const proxy = createServer((req, res) => {
  const upstream = request(
    {
      host: '127.0.0.1',
      port: serverPort,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${token}` },
    },
    (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${proxy.address().port}/mcp`;

const failed = [];
for (const scenario of SCENARIOS) {
  console.log(`\n== ${scenario}`);
  const result = await new Promise((resolve) => {
    const run = spawn(node22, [suite, 'server', '--url', url, '--scenario', scenario], { stdio: 'inherit' });
    run.once('exit', (code) => resolve(code));
  });
  if (result !== 0) failed.push(scenario);
}

proxy.close();
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
rmSync(dataDir, { recursive: true, force: true });
console.log(
  failed.length === 0
    ? `\nconformance: all ${SCENARIOS.length} scenarios passed (${SCENARIOS.join(', ')})`
    : `\nconformance: failed: ${failed.join(', ')}`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
