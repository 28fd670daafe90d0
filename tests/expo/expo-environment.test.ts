/**
 * A project's environment with the `expo` builder on the real SDK 58 toolchain (docs/security.md
 * "Project environment"): the code agent's command gets a plain `EXPO_PUBLIC_*` variable and a
 * secret; the app's code reads the plain one, which Expo inlines into the web bundle, and a new
 * value reaches the next build (the transform cache is kept per value); the secret is in no
 * bundle, export or message (the agent's output names it `[secret API_SECRET]`); a build whose
 * source holds the secret completes with its preview and without a checkpoint, and says why.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../../src/app.js';
import type { RunningHttpServer } from '../../src/transports/http-server.js';
import { createProject, rawHttp, tempDir, toolResult, waitIdle, type TestServer } from '../helpers.js';
import { ensureToolchain, startExpoServer } from './expo-helpers.js';

const SECRET = 'expo-agent-secret-8d1c44';
const AGENT = `#!/bin/sh
set -e
test "$API_SECRET" = "${SECRET}" || { echo "no secret"; exit 3; }
echo "the agent has $API_SECRET"
printf '%s\\n' "export const greeting: string = process.env.EXPO_PUBLIC_GREETING ?? 'none';" > src/greeting.ts
if [ "$WRITE_KEY" = yes ]; then echo "$API_SECRET" > key-note.txt; fi
grep -q "src/greeting" App.tsx || sed -i "1i import { greeting } from './src/greeting';\\nconsole.log('greeting:', greeting);" App.tsx
`;

let server: TestServer;
let artifacts: RunningHttpServer;
let token: string;

beforeAll(async () => {
  await ensureToolchain();
  const agentFile = join(tempDir(), 'agent.sh');
  writeFileSync(agentFile, AGENT, { mode: 0o755 });
  server = await startExpoServer({ agentCommand: agentFile, agentTimeoutSeconds: 120 });
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  token = server.token('alice');
});

afterAll(async () => {
  await artifacts?.close();
  await server?.close();
});

/** The text of the web preview's JavaScript bundles. */
async function bundleOf(session: any): Promise<string> {
  const preview = session.lastWorkflow.previewUrls.find((p: any) => p.kind === 'preview');
  const page = await rawHttp(preview.url);
  const scripts = [...page.text.matchAll(/src="([^"]+\.js)"/g)].map((m) => new URL(m[1]!, preview.url).href);
  return (await Promise.all(scripts.map(async (s) => (await rawHttp(s)).text))).join('\n');
}

describe('expo builder: project environment', () => {
  it('inlines EXPO_PUBLIC_* values into the app, a new value into the next build, and never a secret', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Env Expo' });
    await server.app.env.set(project.id, 'EXPO_PUBLIC_GREETING', 'Hello from build one', false);
    await server.app.env.set(project.id, 'API_SECRET', SECRET, true);
    const build = async () => {
      await toolResult(server.mcpUrl, token, 'svc_send_message', {
        projectId: project.id,
        message: 'Show the greeting',
        kind: 'build',
      });
      const session = await waitIdle(server.mcpUrl, token, project.id, 540_000);
      expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
      return session;
    };
    const first = await build();
    const firstBundle = await bundleOf(first);
    expect(firstBundle).toContain('Hello from build one');
    expect(firstBundle).not.toContain(SECRET);

    await server.app.env.set(project.id, 'EXPO_PUBLIC_GREETING', 'Hello from build two', false);
    const second = await build();
    const secondBundle = await bundleOf(second);
    expect(secondBundle).toContain('Hello from build two');
    expect(secondBundle).not.toContain('Hello from build one');

    const exported = await rawHttp(second.lastWorkflow.export);
    expect(exported.status).toBe(200);
    expect(exported.body.includes(Buffer.from(SECRET))).toBe(false);
    const { messages } = await toolResult(server.mcpUrl, token, 'svc_get_messages', {
      projectId: project.id,
      limit: 500,
    });
    const said = JSON.stringify(messages);
    expect(said).toContain('the agent has [secret API_SECRET]');
    expect(said).not.toContain(SECRET);

    // A build that commits the secret into a file the app does not bundle: its preview is published,
    // its checkpoint (the source) is refused and said, and the workflow still completes.
    await server.app.env.set(project.id, 'WRITE_KEY', 'yes', false);
    const third = await build();
    expect(third.lastWorkflow.export).toBeNull();
    expect(await bundleOf(third)).not.toContain(SECRET);
    const after = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 500 });
    const thirdSaid = after.messages
      .filter((m: any) => m.workflowId === third.lastWorkflow.id)
      .map((m: any) => m.content);
    expect(thirdSaid.join('\n')).toMatch(/No checkpoint saved for this workflow: .*secret/);
    expect(JSON.stringify(after.messages)).not.toContain(SECRET);
  });
});
