/**
 * The words of the errors (docs/contract.md#errors), through a real SDK client over HTTP:
 * - every tool's every parameter, given values of the wrong type, out of range, blank, too long
 *   and unknown: each -32602 reason (message and `data.issues`) is ours, never zod's wording;
 * - every -32004 says what was not found in `data` (`resource` and `reason`).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, httpClient, rpcErrorOf, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
let client: Client;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.token('alice');
  client = await httpClient(server.mcpUrl, token);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

/** Phrases of zod's error messages (v4 and v3), and its comparison signs: none may reach a caller. */
const ZOD_PHRASES = [
  'Too small',
  'Too big',
  'expected',
  'Expected',
  'Invalid input',
  'Invalid string',
  'Invalid option',
  'Invalid enum',
  'Invalid type',
  'Unrecognized key',
  'received',
  'Required',
  '>=',
  '<=',
  'String must contain',
  'Number must be',
  'Array must contain',
];

async function failure(name: string, args: Record<string, unknown>) {
  try {
    await client.callTool({ name, arguments: args });
  } catch (error) {
    return rpcErrorOf(error);
  }
  throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)} did not fail`);
}

/** Values a parameter of `schema` must refuse. */
function badValues(schema: Record<string, any>): unknown[] {
  const out: unknown[] = [null, true, [], {}, [1, 2]];
  if (schema.type === 'string') {
    out.push(42, 1.5, '', '   ', 'not valid \u0000', 'x'.repeat((schema.maxLength ?? 1000) + 1));
    if (schema.format === 'uuid') out.push('not-a-uuid', '123');
  }
  if (schema.type === 'integer' || schema.type === 'number')
    out.push('7', -1, 0, 1.5, -0.5, 1e12, Number.MAX_SAFE_INTEGER);
  if (Array.isArray(schema.enum)) out.push('neither', 'BUILD', 1);
  return out;
}

describe('-32602 reasons are ours', () => {
  it('walks every parameter of every tool with bad values: no zod wording in the message or data.issues', async () => {
    const project = await createProject(server.mcpUrl, token);
    const { tools } = await client.listTools();
    expect(tools.length).toBe(7);
    let checked = 0;
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, any>>;
      // A valid call to start from: every required parameter with a good value.
      const good: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(properties)) {
        if (!(tool.inputSchema.required ?? []).includes(name)) continue;
        good[name] = name === 'projectId' ? project.id : schema.type === 'string' ? 'Hello' : 1;
      }
      const cases: Record<string, unknown>[] = [{ ...good, notAParameter: 1 }];
      for (const [name, schema] of Object.entries(properties))
        for (const value of badValues(schema)) cases.push({ ...good, [name]: value });
      for (const args of cases) {
        let error;
        try {
          await client.callTool({ name: tool.name, arguments: args });
          continue; // a value the tool takes (a blank description is allowed, for example)
        } catch (e) {
          error = rpcErrorOf(e);
        }
        if (error.code !== -32602) continue;
        checked++;
        const words = [error.message, ...((error.data?.issues ?? []) as { problem: string }[]).map((i) => i.problem)];
        for (const text of words) {
          for (const phrase of ZOD_PHRASES)
            expect(text, `${tool.name} ${JSON.stringify(args).slice(0, 120)}`).not.toContain(phrase);
          expect(text).toMatch(/^(Missing required parameter: |Invalid parameter: |must |is |are |has |does |cannot )/);
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('says range limits in numbers and units', async () => {
    const project = await createProject(server.mcpUrl, token);
    const zero = await failure('svc_get_messages', { projectId: project.id, limit: 0 });
    expect(zero.message).toBe('Invalid parameter: limit must be at least 1');
    const many = await failure('svc_get_messages', { projectId: project.id, limit: 501 });
    expect(many.message).toBe('Invalid parameter: limit must be at most 500');
    const negative = await failure('svc_get_messages', { projectId: project.id, after: -1 });
    expect(negative.message).toBe('Invalid parameter: after must be at least 0');
    const fraction = await failure('svc_get_messages', { projectId: project.id, after: 1.5 });
    expect(fraction.message).toBe('Invalid parameter: after must be an integer');
    const long = await failure('svc_create_project', { name: 'x'.repeat(256) });
    expect(long.message).toBe('Invalid parameter: name must be at most 255 characters');
  });
});

describe('-32004 says what was not found', () => {
  it('an unknown project, an unknown workflow, and nothing active to cancel each name the resource and the reason', async () => {
    const unknownProject = await failure('svc_get_session', { projectId: '00000000-0000-4000-8000-000000000000' });
    expect(unknownProject).toMatchObject({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'project', reason: 'unknown id' },
    });
    const project = await createProject(server.mcpUrl, token);
    const nothing = await failure('svc_cancel_workflow', { projectId: project.id });
    expect(nothing).toMatchObject({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'workflow', reason: 'none active' },
    });
    const unknownWorkflow = await failure('svc_cancel_workflow', {
      projectId: project.id,
      workflowId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknownWorkflow).toMatchObject({
      code: -32004,
      message: 'Resource not found',
      data: { resource: 'workflow', reason: 'unknown id' },
    });
    for (const name of ['svc_get_project', 'svc_get_messages', 'svc_send_message']) {
      const args: Record<string, unknown> = {
        projectId: '00000000-0000-4000-8000-000000000000',
        ...(name === 'svc_send_message' && { message: 'Build it' }),
      };
      expect(await failure(name, args), name).toMatchObject({
        code: -32004,
        data: { resource: 'project', reason: 'unknown id' },
      });
    }
  });
});
