/**
 * Parts of the MCP-over-HTTP hot path (docs/performance.md "Performance"): the per-message deadlines on one
 * shared timer (src/mcp/deadline-queue.ts) and the reply JSON that reuses a tool result's own
 * serialisation (src/mcp/reply-json.ts), which must be byte for byte `JSON.stringify`, and a
 * tool result that, copied or compared, is the plain `CallToolResult` it always was. No test
 * here waits on a clock: deadlines are awaited as events, and their order is what is checked.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DeadlineQueue } from '../src/mcp/deadline-queue.js';
import { defineTool, withContent, type ToolResult } from '../src/mcp/define-tool.js';
import type { JsonRpcReply } from '../src/mcp/in-process-transport.js';
import { replyJson } from '../src/mcp/reply-json.js';
import type { ToolServices } from '../src/mcp/tool-services.js';

/** Starts a deadline and resolves with `name` (recorded in `fired`) when it fires. */
function deadlineOf(queue: DeadlineQueue, name: string, fired: string[]) {
  let deadline!: ReturnType<DeadlineQueue['start']>;
  const expired = new Promise<string>((resolve) => {
    deadline = queue.start(() => {
      fired.push(name);
      resolve(name);
    });
  });
  return { deadline, expired };
}

describe('per-message deadlines on one timer', () => {
  it('fire in the order they were started; a cancelled one never fires', async () => {
    const queue = new DeadlineQueue(5);
    const fired: string[] = [];
    const a = deadlineOf(queue, 'a', fired);
    const b = deadlineOf(queue, 'b', fired);
    const c = deadlineOf(queue, 'c', fired);
    b.deadline.cancel();
    await Promise.all([a.expired, c.expired]);
    // b was due between a and c: had it not been cancelled, it would have fired before c.
    expect(fired).toEqual(['a', 'c']);
  });

  it('a deadline started while others fire, and after the queue ran empty, still fires', async () => {
    const queue = new DeadlineQueue(5);
    const fired: string[] = [];
    const first = deadlineOf(queue, 'first', fired);
    await first.expired;
    const later = deadlineOf(queue, 'later', fired);
    await later.expired;
    expect(fired).toEqual(['first', 'later']);
  });

  it('an extended deadline leaves the queue: the ones started after it fire first', async () => {
    const queue = new DeadlineQueue(5);
    const fired: string[] = [];
    const waiting = deadlineOf(queue, 'waiting', fired);
    waiting.deadline.extend(60_000);
    const short = deadlineOf(queue, 'short', fired);
    await short.expired;
    expect(fired).toEqual(['short']);
    waiting.deadline.cancel();
  });
});

/** A tool whose output is `output`, called as the dispatcher calls it. */
async function resultOf(output: Record<string, unknown>, extra?: ToolResult['content'][number][]): Promise<ToolResult> {
  const tool = defineTool({
    name: 'probe',
    title: 'Probe',
    description: 'Returns its fixed output',
    input: z.strictObject({}),
    output: z.looseObject({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handle: () => (extra ? withContent(output, extra) : output),
  });
  return tool.call(
    {},
    { caller: { userId: 'u', userName: 'u', plan: 'free', tokenId: 't' }, services: {} as ToolServices },
  );
}

const OUTPUTS: Record<string, unknown>[] = [
  {
    id: '00000000-0000-4000-8000-000000000000',
    name: 'Bench',
    description: null,
    visibility: 'private',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  },
  {
    text: 'quotes " and \\ backslashes, a\nnewline, a tab\t, <script>, \u2028, \u0000',
    emoji: '📱',
    lone: '\ud800',
    nested: { list: [1, 2.5, -0, 1e21, null, true], empty: {} },
  },
  { projects: [], nextCursor: null, skipped: undefined },
];

describe('reply JSON', () => {
  it('equals JSON.stringify of the reply for tool results, with extra content, stamped results, errors and other results', async () => {
    const replies: JsonRpcReply[] = [];
    for (const output of OUTPUTS) {
      const plain = await resultOf(output);
      const withLinks = await resultOf(output, [
        { type: 'resource_link', uri: 'http://127.0.0.1/p/', name: 'preview' },
      ]);
      // The 2026-07-28 era's stamp: a new object around the same structuredContent.
      const stamped = {
        ...plain,
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'x', version: '1' } },
      };
      for (const result of [plain, withLinks, stamped]) {
        replies.push({ jsonrpc: '2.0', id: 7, result }, { jsonrpc: '2.0', id: 'a"b', result });
      }
    }
    replies.push({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid request', data: { reason: 'x' } },
    });
    replies.push({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    for (const reply of replies) expect(replyJson(reply)).toBe(JSON.stringify(reply));
  });

  it('a tool result has exactly the keys content and structuredContent, also when spread', async () => {
    const result = await resultOf(OUTPUTS[0]!);
    expect(Object.keys(result)).toEqual(['content', 'structuredContent']);
    expect(Object.keys({ ...result })).toEqual(['content', 'structuredContent']);
    expect(JSON.parse(JSON.stringify(result))).toEqual({
      content: [{ type: 'text', text: JSON.stringify(OUTPUTS[0]) }],
      structuredContent: OUTPUTS[0],
    });
  });
});
