// Baseline: the floor of a `svc_get_project` server. node:http, one prepared better-sqlite3 read of
// the project row per request (from the data dir of the server under test), and the same reply as
// mobile-builder-mcp's: the same JSON-RPC body bytes (the project as JSON text in one text item,
// then as `structuredContent`) and the same response headers (the `X-RateLimit-*` values fixed).
// No authentication, no rate limit, no envelope checks: what any server answering this call from
// SQLite must at least do. `npm run bench` checks that its body equals ours, byte for byte.
//
// A second route, `svc_list_projects` (dispatched by the call's tool name), is the floor of that
// call: one prepared read of the owner's projects, newest first, and the same reply as ours (the
// list as JSON text in one text item, then as `structuredContent`). The floor does not
// authenticate, so the owner is given on the command line.
//
// Usage: node floor-server.mjs <path of mobile-builder.db> [owner id for svc_list_projects];
// prints PORT=<port> once listening.
import Database from 'better-sqlite3';
import { createServer } from 'node:http';

const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
const byId = db.prepare('SELECT id, name, description, visibility, created_at, updated_at FROM projects WHERE id = ?');
const byOwner = db.prepare(
  'SELECT id, name, description, visibility, created_at, updated_at FROM projects WHERE owner_id = ? ORDER BY created_at DESC, rowid DESC',
);
const listOwner = process.argv[3];

/** The project of a row, in the tool's field order. */
const projectOf = (row) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  visibility: row.visibility,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The tool output of a call: the project, or the owner's list. */
function outputOf(params) {
  if (params.name === 'svc_list_projects') return { projects: byOwner.all(listOwner).map(projectOf) };
  return projectOf(byId.get(params.arguments.projectId));
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const message = JSON.parse(
      chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'),
    );
    const output = outputOf(message.params);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output },
    });
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
