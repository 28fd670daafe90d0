// Baseline 1: a bare node:http server that reads the body and returns a fixed JSON-RPC response.
// The ceiling any JSON-RPC-over-HTTP server on this machine can reach.
import { createServer } from 'node:http';

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: {
    content: [{ type: 'text', text: '{"id":"00000000-0000-4000-8000-000000000000","name":"Bench"}' }],
    structuredContent: { id: '00000000-0000-4000-8000-000000000000', name: 'Bench' },
  },
});
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT=${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
