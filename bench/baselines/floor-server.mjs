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
// Two more routes are the floors of the write path and the conversation (round three's goals 2
// and 3, docs/performance.md "Round three"): `svc_send_message`, a build instruction queued behind
// a running build: one IMMEDIATE transaction with the same statements' work as ours (the project's
// active workflow and the owner's queue read, the workflow and its two messages inserted, the
// project's message counter moved twice, the queue position counted) and the same reply's shape;
// `svc_get_messages`: one prepared read of the page (limit + 1 rows) and the same reply, byte for
// byte (which the bench checks). The send opens a second, writable connection on first use, with
// the server's connection settings (foreign keys on, `synchronous = NORMAL`).
//
// Usage: node floor-server.mjs <path of mobile-builder.db> [owner id for svc_list_projects];
// prints PORT=<port> once listening.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
const byId = db.prepare('SELECT id, name, description, visibility, created_at, updated_at FROM projects WHERE id = ?');
const byOwner = db.prepare(
  'SELECT id, name, description, visibility, created_at, updated_at FROM projects WHERE owner_id = ? ORDER BY created_at DESC, rowid DESC',
);
const listOwner = process.argv[3];
const messagesAfter = db.prepare(
  'SELECT id, seq, role, type, content, workflow_id, created_at FROM messages WHERE project_id = ? AND seq > ? ORDER BY seq LIMIT ?',
);
/** The writable connection and statements of the send floor, made on its first call. */
let send;

/** The statements of a send: what ours runs for a build instruction queued behind a running build. */
function sendStatements() {
  const w = new Database(process.argv[2], { fileMustExist: true });
  w.pragma('busy_timeout = 5000');
  // The connection settings of the server under test (src/store/sqlite/open.ts), so that the
  // same statements do the same work: foreign keys checked on every insert, commits synced as
  // that server syncs them.
  w.pragma('foreign_keys = ON');
  w.pragma('synchronous = NORMAL');
  return {
    begin: w.prepare('BEGIN IMMEDIATE'),
    commit: w.prepare('COMMIT'),
    rollback: w.prepare('ROLLBACK'),
    active: w.prepare(
      "SELECT id FROM workflows WHERE project_id = ? AND status IN ('running', 'waiting_for_input', 'cancelling')",
    ),
    // The owner's projects first, then each one's queued rows: the order ours uses (a CROSS JOIN,
    // which SQLite keeps), so that the floor's SQL is as cheap as ours.
    ownerQueued: w.prepare(
      "SELECT count(*) AS n FROM projects CROSS JOIN workflows WHERE projects.owner_id = (SELECT owner_id FROM projects WHERE id = ?) AND workflows.project_id = projects.id AND workflows.status = 'queued'",
    ),
    maxSeq: w.prepare('SELECT max(seq) AS m FROM workflows'),
    insertWorkflow: w.prepare(
      "INSERT INTO workflows (id, project_id, seq, kind, status, instruction, step_index, step_total, builder, created_at) VALUES (?, ?, ?, 'build', 'queued', ?, 0, 0, 'expo', ?)",
    ),
    nextMessageSeq: w.prepare(
      'UPDATE projects SET message_seq = message_seq + 1 WHERE id = ? RETURNING message_seq AS seq',
    ),
    insertMessage: w.prepare(
      'INSERT INTO messages (id, project_id, seq, role, type, content, workflow_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    position: w.prepare("SELECT count(*) AS n FROM workflows WHERE project_id = ? AND status = 'queued'"),
  };
}

/** The floor of a send (see the file comment): one transaction, then the same result's fields. */
function sendOutput({ projectId, message, kind }) {
  send ??= sendStatements();
  const now = new Date().toISOString();
  const workflowId = randomUUID();
  const messageId = randomUUID();
  send.begin.run();
  try {
    send.active.get(projectId);
    send.ownerQueued.get(projectId);
    send.insertWorkflow.run(workflowId, projectId, send.maxSeq.get().m + 1, message, now);
    send.insertMessage.run(
      messageId,
      projectId,
      send.nextMessageSeq.get(projectId).seq,
      'user',
      'instruction',
      message,
      workflowId,
      now,
    );
    const queuePosition = send.position.get(projectId).n;
    send.insertMessage.run(
      randomUUID(),
      projectId,
      send.nextMessageSeq.get(projectId).seq,
      'system',
      'status',
      `Build queued at position ${queuePosition}: it starts when the workflows ahead of it finish.`,
      workflowId,
      now,
    );
    send.commit.run();
    return { messageId, workflowId, kind, status: 'queued', queuePosition };
  } catch (error) {
    send.rollback.run();
    throw error;
  }
}

/** The floor of a page of messages: limit + 1 rows read, the page's views. */
function messagesOutput({ projectId, after = 0, limit = 100 }) {
  const rows = messagesAfter.all(projectId, after, limit + 1);
  const page = rows.slice(0, limit);
  return {
    messages: page.map((row) => ({
      id: row.id,
      seq: row.seq,
      role: row.role,
      type: row.type,
      content: row.content,
      workflowId: row.workflow_id,
      createdAt: row.created_at,
    })),
    hasMore: rows.length > limit,
    nextAfter: page.length > 0 ? page[page.length - 1].seq : after,
  };
}

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
  if (params.name === 'svc_get_messages') return messagesOutput(params.arguments);
  if (params.name === 'svc_send_message') return sendOutput(params.arguments);
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
