/**
 * A user's open `svc_get_session` waits are bounded (docs/contract.md#tools): each holds one of
 * the HTTP listener's request slots for up to a minute, so without a bound one tenant on the
 * `pro` plan (1000 requests a minute) fills every slot with waits on a question nobody answers,
 * and every other user gets 429 and `/healthz` 503. Past the bound the user's oldest wait ends at
 * once with `reason: "superseded"`; another user's wait is not touched.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_OPEN_WAITS_PER_USER } from '../src/services/open-waits.js';
import { createProject, startTestServer, toolResult, waitFor, type TestServer } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

let server: TestServer;
let builder: ManualBuilder;

beforeAll(async () => {
  builder = new ManualBuilder();
  server = await startTestServer({ builderInstance: builder });
});
afterAll(async () => {
  for (const run of builder.live()) run.fail();
  await server.close();
});

/** A wait of 60 s over raw HTTP with SSE: resolves `opened` once its first progress notice arrived, `answer` with the final JSON-RPC reply. */
function openWait(token: string, projectId: string, abort: AbortController) {
  let opened!: () => void;
  const openedPromise = new Promise<void>((resolve) => (opened = resolve));
  const answer = (async () => {
    const res = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_get_session', arguments: { projectId, waitSeconds: 45 }, _meta: { progressToken: 'w' } },
      }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.includes('notifications/progress')) opened();
    }
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('event: message'))
      .map(
        (e) =>
          JSON.parse(e.slice(e.indexOf('data: ') + 6)) as {
            id?: number;
            result?: { structuredContent: { wait: { reason: string } } };
          },
      );
    return events.find((e) => e.id === 1)!;
  })();
  answer.catch(() => undefined);
  return { opened: openedPromise, answer };
}

/** A project of `token`'s user whose build runs (held by the manual builder) until the test ends. */
async function activeProject(token: string): Promise<string> {
  const project = await createProject(server.mcpUrl, token);
  const sent = await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'Build it',
    kind: 'build',
  });
  await waitFor(() => builder.runOf(sent.workflowId), 15_000, 'the run to start');
  return project.id as string;
}

it(`a user holds at most ${MAX_OPEN_WAITS_PER_USER} open waits: one more ends their oldest ("superseded"), not another user's`, async () => {
  const alice = server.token('alice');
  const bob = server.token('bob');
  const aliceProject = await activeProject(alice);
  const bobProject = await activeProject(bob);
  const abort = new AbortController();
  try {
    const bobWait = openWait(bob, bobProject, abort);
    await bobWait.opened;
    const waits = [];
    for (let i = 0; i < MAX_OPEN_WAITS_PER_USER; i++) {
      const wait = openWait(alice, aliceProject, abort);
      await wait.opened;
      waits.push(wait);
    }
    // One more: the oldest of alice's ends at once, the newest stays open.
    const extra = openWait(alice, aliceProject, abort);
    await extra.opened;
    const oldest = await waits[0]!.answer;
    expect(oldest.result!.structuredContent.wait.reason).toBe('superseded');
    // Bob's wait and alice's other waits are still open: a step change ends them all as "changed".
    for (const run of builder.live()) run.step('Bundling the web preview');
    expect((await bobWait.answer).result!.structuredContent.wait.reason).toBe('changed');
    for (const wait of [...waits.slice(1), extra])
      expect((await wait.answer).result!.structuredContent.wait.reason).toBe('changed');
  } finally {
    abort.abort();
  }
});
