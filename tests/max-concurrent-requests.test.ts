/**
 * `--max-concurrent-requests` sets the HTTP listener's request slots of the built bin
 * (docs/cli.md#command-line, docs/contract.md#limits-and-plans): an open `svc_get_session` wait
 * holds one, so with one slot a second call is refused with 429 `data.scope = "server"` while the
 * wait is open, and served once its client has gone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';
import { callTool, createProject, tempDir, toolResult, waitFor } from './helpers.js';

describe('--max-concurrent-requests', () => {
  let http: SpawnedServer | undefined;
  afterAll(() => http?.stop());

  it('bounds the requests in flight, an open wait included', async () => {
    const dataDir = tempDir();
    const token = cliToken(dataDir, 'alice');
    // A step of the scripted builder lasts longer than the test: the build stays active, so the wait stays open.
    http = await spawnHttpServer(dataDir, ['--max-concurrent-requests', '1', '--scripted-step-ms', '600000'], {
      SVC_LOG_LEVEL: 'silent',
    });
    const { mcpUrl } = http;
    const project = await createProject(mcpUrl, token);
    await toolResult(mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'Build a todo list app',
      kind: 'build',
    });
    // Once the build runs nothing the session shows changes, so the wait lasts (a wait opened while
    // the build was still queued would end when it started, giving the slot back).
    await waitFor(
      async () =>
        (await toolResult(mcpUrl, token, 'svc_get_session', { projectId: project.id })).activeWorkflow?.status ===
        'running',
      20_000,
      'the build running',
    );
    const leave = new AbortController();
    const waiting = fetch(mcpUrl, {
      method: 'POST',
      signal: leave.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_get_session', arguments: { projectId: project.id, waitSeconds: 45 } },
      }),
    }).catch((error: Error) => error);
    const refused = await waitFor(
      async () => {
        const res = await callTool(mcpUrl, token, 'svc_get_project', { projectId: project.id });
        return res.status === 429 ? res : null;
      },
      20_000,
      'a call refused while the wait holds the only slot',
    );
    expect(refused.json).toMatchObject({ error: { code: -32005, data: { scope: 'server', limit: 1 } } });

    leave.abort();
    expect(await waiting).toBeInstanceOf(Error);
    const served = await waitFor(
      async () => {
        const res = await callTool(mcpUrl, token, 'svc_get_project', { projectId: project.id });
        return res.status === 200 ? res : null;
      },
      20_000,
      'the slot given back once the waiting client has gone',
    );
    expect(served.json.result.structuredContent.id).toBe(project.id);
  });
});
