// Baseline: the floor of a `svc_get_project` server. node:http, one prepared better-sqlite3 read of
// the project row per request (from the data dir of the server under test), and the same reply as
// mobile-builder-mcp's: the same JSON-RPC body bytes (the project as JSON text in one text item,
// then as `structuredContent`) and the same response headers (the `X-RateLimit-*` values fixed).
// No authentication, no rate limit, no envelope checks: what any server answering this call from
// SQLite must at least do. `npm run bench` checks that its body equals ours, byte for byte.
//
// Usage: node floor-server.mjs <path of mobile-builder.db>; prints PORT=<port> once listening.
import Database from 'better-sqlite3';
import { createServer } from 'node:http';

const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
const byId = db.prepare('SELECT id, name, description, visibility, created_at, updated_at FROM projects WHERE id = ?');

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const message = JSON.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    const row = byId.get(message.params.arguments.projectId);
    const project = { id: row.id, name: row.name, description: row.description, visibility: row.visibility, createdAt: row.created_at, updatedAt: row.updated_at };
    const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: JSON.stringify(project) }], structuredContent: project } });
    res.writeHead(200, [
      'Content-Type',
      'application/json',
      'Content-Length',
      String(Buffer.byteLength(body)),
      'Cache-Control',
      'no-store',
      'X-RateLimit-Limit',
      '1000000000',
      'X-RateLimit-Remaining',
      '999999999',
      'X-RateLimit-Reset',
      '1800000000',
    ]);
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT=${server.address().port}\n`));
process.on('SIGTERM', () => {
  db.close();
  process.exit(0);
});
