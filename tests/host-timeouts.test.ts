/**
 * Waits fit the hosts (README "Waits and host timeouts"): the stock MCP SDK client, with its
 * default 60 s request timeout and no timer reset on progress, follows a three-minute build of the
 * built bin (the scripted builder with 60 s steps) to its end with waits of the recommended
 * length, over stdio and over streamable HTTP. No call times out; a waitSeconds above the cap is
 * answered at the cap; a step longer than the heartbeat is reported while it runs. Nothing here
 * measures time: the test follows the build's states until it ends.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, tempDir } from './helpers.js';
import { cliToken, spawnHttpServer, type SpawnedServer } from './bin-helpers.js';

/** Three steps of 60 s: a three-minute build, each step longer than the longest wait. */
const STEP_MS = '60000';
const RECOMMENDED_WAIT = 45;

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

async function stdioClient(): Promise<Client> {
  const dataDir = tempDir();
  const token = cliToken(dataDir, 'alice');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', '--data-dir', dataDir, '--builder', 'scripted', '--scripted-step-ms', STEP_MS],
    env: { PATH: process.env.PATH ?? '', SVC_API_TOKEN: token },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'host-timeouts', version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  return client;
}

async function httpClient(): Promise<Client> {
  const dataDir = tempDir();
  const token = cliToken(dataDir, 'alice');
  const server: SpawnedServer = await spawnHttpServer(dataDir, ['--scripted-step-ms', STEP_MS]);
  closers.push(() => server.stop());
  const client = new Client({ name: 'host-timeouts', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  closers.push(() => client.close());
  return client;
}

/** One `svc_get_session` wait with the stock client's defaults (60 s timeout), collecting its progress messages. */
async function waitOnce(client: Client, projectId: string, waitSeconds: number, progress: string[]) {
  const result = await client.callTool({ name: 'svc_get_session', arguments: { projectId, waitSeconds } }, undefined, {
    onprogress: (p) => progress.push(p.message ?? ''),
  });
  return result.structuredContent as any;
}

describe.concurrent('a three-minute build followed with the stock SDK client', () => {
  for (const [transport, connect] of [
    ['stdio', stdioClient],
    ['http', httpClient],
  ] as const) {
    it(
      `over ${transport}: every wait answers before the client's timeout, until the build ends`,
      { timeout: 0 },
      async () => {
        const client = await connect();
        const project = (
          await client.callTool({ name: 'svc_create_project', arguments: { name: `Long build over ${transport}` } })
        ).structuredContent as any;
        await client.callTool({
          name: 'svc_send_message',
          arguments: { projectId: project.id, message: 'Build the app', kind: 'build' },
        });

        // The largest accepted value is answered at the cap, without the client's timeout.
        const progress: string[] = [];
        const capped = await waitOnce(client, project.id, 60, progress);
        expect(capped.wait).toMatchObject({ cappedAtSeconds: 45 });
        expect(['time_up', 'changed']).toContain(capped.wait.reason);

        const reasons: string[] = [capped.wait.reason];
        let session = capped;
        while (session.hasActiveWorkflows) {
          session = await waitOnce(client, project.id, RECOMMENDED_WAIT, progress);
          expect(session.wait.cappedAtSeconds).toBeUndefined();
          reasons.push(session.wait.reason);
        }
        expect(session.lastWorkflow).toMatchObject({ kind: 'build', status: 'completed' });
        expect(session.previewUrls.map((p: any) => p.kind)).toContain('preview');
        // Each step outlasts a wait: some waits ran to their end, and heard of the step as it ran.
        expect(reasons).toContain('time_up');
        expect(progress.some((m) => /^build running: step \d\/4 .+ \(this step has run \d+ s\)$/.test(m))).toBe(true);
      },
    );
  }
});
