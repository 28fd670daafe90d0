// Baseline for stdio start-up: a bare Node process that reads one JSON-RPC line from stdin and
// answers `initialize` with a fixed result, then waits, as a stdio MCP server does. The floor any
// stdio server on this machine can reach: Node's own start-up, one read, one JSON parse and write.
// CommonJS, as the bin's bundle is (an ES module entry costs a few milliseconds more).
'use strict';
let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  const end = buffered.indexOf('\n');
  if (end < 0) return;
  const request = JSON.parse(buffered.slice(0, end));
  buffered = buffered.slice(end + 1);
  const result = {
    protocolVersion: request.params.protocolVersion,
    capabilities: { tools: { listChanged: false } },
    serverInfo: { name: 'bare', version: '1.0.0' },
  };
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, result })}\n`);
});
