/**
 * The private "latest" update URL (docs/builders.md "Expo updates"): installed into an app, it follows every
 * deploy of the project, so only the project's owner reads it. Anyone may read a public project's
 * conversation: there it is hidden from every reader but the owner. (The deployment pages never
 * print it: tests/update-assets.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HIDDEN_LATEST_UPDATE_PATH } from '../src/builders/expo/update-channels.js';
import { createProject, startTestServer, toolResult, waitFor, waitIdle, type TestServer } from './helpers.js';
import { ManualBuilder } from './manual-builder.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the latest update URL', () => {
  it("is shown to a public project's owner and hidden from every other reader", async () => {
    const path = `/updates/latest/${'A'.repeat(16)}_-${'z'.repeat(14)}`;
    const builder = new ManualBuilder();
    server = await startTestServer({ builderInstance: builder });
    const owner = server.token('olivia');
    const reader = server.token('rita');
    const project = await createProject(server.mcpUrl, owner, { name: 'Public app', visibility: 'public' });
    const sent = await toolResult(server.mcpUrl, owner, 'svc_send_message', {
      projectId: project.id,
      message: 'Deploy it',
      kind: 'deploy',
    });
    const run = await waitFor(() => builder.runOf(sent.workflowId));
    // As the expo builder's deploy says it (a builder's own words are stored as they are).
    await run.context.say(`deployed; latest: ${path} (keep it private)`, 'result');
    run.finish();
    await waitIdle(server.mcpUrl, owner, project.id);

    const read = async (token: string) => {
      const { messages } = await toolResult(server!.mcpUrl, token, 'svc_get_messages', {
        projectId: project.id,
        limit: 500,
      });
      return messages.find((m: any) => m.type === 'result').content as string;
    };
    expect(await read(owner)).toBe(`deployed; latest: ${path} (keep it private)`);
    const seen = await read(reader);
    expect(seen).not.toContain(path);
    expect(seen).toBe(`deployed; latest: ${HIDDEN_LATEST_UPDATE_PATH} (keep it private)`);
  });
});
