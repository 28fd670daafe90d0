/**
 * The typed tool caller (`src/mcp/tool-caller.ts`) that the web console calls the tools through:
 * its answers are the tools' own (the same JSON as `tools/call`), its arguments and answers have
 * the types of the tools' schemas, and a tool whose output changes no longer fits the console.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { toJsonRpcError } from '../src/errors.js';
import type { ProjectStreamOptions } from '../src/console/project-stream.js';
import { defineTool } from '../src/mcp/define-tool.js';
import { createToolCaller, type ToolCaller } from '../src/mcp/tool-caller.js';
import { getMessagesTool } from '../src/mcp/tools/get-messages.js';
import { TOOLS } from '../src/mcp/tools/index.js';
import type { MessagesPage, Project, SessionView } from '../src/services/resource-shapes.js';
import { callTool, ROOT, startTestServer, toolResult, type TestServer } from './helpers.js';

let server: TestServer;
let token: string;
let tools: ToolCaller<typeof TOOLS>;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  token = server.token('alice');
  tools = createToolCaller(TOOLS, server.app.tools);
});
afterAll(() => server.close());

const alice = async () => (await server.app.tokens.authenticate(token))!;

describe('typed tool caller', () => {
  it('answers what tools/call answers, byte for byte', async () => {
    const created = await tools.createProject({ name: 'Typed', visibility: 'private' }, await alice());
    const overHttp = await toolResult(server.mcpUrl, token, 'svc_get_project', { projectId: created.id });
    expect(JSON.stringify(await tools.getProject({ projectId: created.id }, await alice()))).toBe(
      JSON.stringify(overHttp),
    );
    expect(JSON.stringify(await tools.listProjects({}, await alice()))).toBe(
      JSON.stringify(await toolResult(server.mcpUrl, token, 'svc_list_projects')),
    );
    const result = await tools.getSession.result({ projectId: created.id }, await alice());
    expect(result.content[0]).toEqual({ type: 'text', text: JSON.stringify(result.structuredContent) });
  });

  it("a form value of the wrong type is refused with the tool's own -32602, as over tools/call", async () => {
    const { id } = await tools.createProject({ name: 'Paged' }, await alice());
    const refused = await tools.getMessages.fromForm({ projectId: id, limit: 'many' }, await alice()).then(
      () => null,
      (error: unknown) => toJsonRpcError(error),
    );
    const overHttp = await callTool(server.mcpUrl, token, 'svc_get_messages', { projectId: id, limit: 'many' });
    expect(refused).toMatchObject({ code: -32602 });
    expect(refused!.message).toBe(overHttp.json.error.message);
    expect(refused!.data).toEqual(overHttp.json.error.data);
  });

  it("types arguments and answers from the tools' schemas", () => {
    expectTypeOf(tools.getProject).returns.resolves.toEqualTypeOf<Project>();
    expectTypeOf(tools.getSession).returns.resolves.toEqualTypeOf<SessionView>();
    expectTypeOf(tools.getMessages).returns.resolves.toEqualTypeOf<MessagesPage>();
    expectTypeOf(tools.listProjects).returns.resolves.toEqualTypeOf<{ projects: Project[] }>();
    expectTypeOf(tools.getSession).parameter(0).toHaveProperty('waitSeconds');
    const typed = async () => {
      // @ts-expect-error: svc_get_project has no parameter `id`.
      await tools.getProject({ id: 'x' }, await alice());
      // @ts-expect-error: a project has no field `owner`.
      return (await tools.getProject({ projectId: 'x' }, await alice())).owner;
    };
    expect(typed).toBeTypeOf('function');
  });

  it('a tool whose output changes no longer fits the console (a compile error)', () => {
    const changedSession = defineTool({
      ...TOOLS.getSession,
      title: 'Changed',
      description: 'Answers without previewUrls.',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      output: z.object({ hasActiveWorkflows: z.boolean() }),
      handle: () => ({ hasActiveWorkflows: false }),
    });
    const changed = createToolCaller({ getSession: changedSession, getMessages: getMessagesTool }, server.app.tools);
    // @ts-expect-error: the console's event stream reads the session's previewUrls, which the changed tool no longer answers.
    const streamTools: ProjectStreamOptions['tools'] = changed;
    expectTypeOf(changed).not.toMatchTypeOf<ProjectStreamOptions['tools']>();
    expect(streamTools.getSession).toBeTypeOf('function');
  });

  it('the console names no tool by string and casts no answer', () => {
    const dir = join(ROOT, 'src', 'console');
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text, file).not.toMatch(/(\(|name: )'svc_[a-z_]+'/);
      expect(text, file).not.toMatch(/structuredContent as|tools\.call\(/);
    }
  });
});
