// Baseline 2: the MCP TypeScript SDK's stock stateless streamable-HTTP pattern (its
// simpleStatelessStreamableHttp example): a new McpServer and transport per request, one trivial tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { z } from 'zod';

function getServer() {
  const server = new McpServer({ name: 'sdk-baseline', version: '1.0.0' });
  server.registerTool(
    'svc_get_project',
    { description: 'Returns a fixed project', inputSchema: { projectId: z.string() } },
    async ({ projectId }) => {
      const project = { id: projectId, name: 'Bench' };
      return { content: [{ type: 'text', text: JSON.stringify(project) }], structuredContent: project };
    },
  );
  return server;
}

const app = createMcpExpressApp();
app.post('/mcp', async (req, res) => {
  const server = getServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
  res.on('close', () => {
    transport.close();
    server.close();
  });
});
const listener = app.listen(0, '127.0.0.1', () => process.stdout.write(`PORT=${listener.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
