// Baseline 3: the MCP TypeScript SDK used the way a long-running service would: one McpServer and
// one StreamableHTTPServerTransport, created once and reused for every request, in the stateful
// JSON mode (a session id from initialize, JSON responses instead of SSE). The bench initializes
// one session and sends its `Mcp-Session-Id` on every request.
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { z } from 'zod';

const server = new McpServer({ name: 'sdk-long-lived-baseline', version: '1.0.0' });
server.registerTool(
  'svc_get_project',
  { description: 'Returns a fixed project', inputSchema: { projectId: z.string() } },
  async ({ projectId }) => {
    const project = { id: projectId, name: 'Bench' };
    return { content: [{ type: 'text', text: JSON.stringify(project) }], structuredContent: project };
  },
);
const transport = new StreamableHTTPServerTransport({
  sessionIdGenerator: () => randomUUID(),
  enableJsonResponse: true,
});
await server.connect(transport);

const app = createMcpExpressApp();
app.post('/mcp', (req, res) => transport.handleRequest(req, res, req.body));
const listener = app.listen(0, '127.0.0.1', () => process.stdout.write(`PORT=${listener.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
