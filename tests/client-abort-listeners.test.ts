/**
 * A long poll through one SDK client leaves no abort listener behind per request. The SDK's
 * streamable HTTP client passes its one long-lived AbortSignal to every fetch, and Node's fetch
 * (undici) adds an abort listener to that signal per request that only garbage collection
 * removes: a build polled for minutes (the expo tests) piled up 1,501 of them and printed
 * MaxListenersExceededWarning. `httpClient` gives each request a signal of its own instead.
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { httpClient, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** The abort signal the SDK transport hands to each of its requests. */
function transportSignal(client: Client): AbortSignal {
  const transport = client.transport as unknown as { _abortController?: AbortController };
  if (!transport._abortController) throw new Error('the SDK transport has no abort controller (SDK changed?)');
  return transport._abortController.signal;
}

describe('SDK client over HTTP', () => {
  it('adds no abort listener per request to its long-lived signal', async () => {
    const client = await httpClient(server.mcpUrl, server.token('poller'));
    try {
      const project = (await client.callTool({ name: 'svc_create_project', arguments: { name: 'Polled' } }))
        .structuredContent as { id: string };
      for (let i = 0; i < 200; i++)
        expect(
          (await client.callTool({ name: 'svc_get_session', arguments: { projectId: project.id } })).isError,
        ).toBeFalsy();
      expect(getEventListeners(transportSignal(client), 'abort').length).toBeLessThanOrEqual(1);
    } finally {
      await client.close();
    }
  });
});
