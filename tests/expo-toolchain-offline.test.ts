/**
 * The expo builder's toolchain install against an unreachable npm registry fails the build clearly
 * and leaves nothing half-installed (through a real server workflow). A process test: it runs npm.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProject, startTestServer, toolResult, waitIdle, type TestServer } from './helpers.js';

describe('expo toolchain install without a registry', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  it('fails the build with toolchain_install_failed and says what to do (no hang)', async () => {
    server = await startTestServer({
      builder: 'expo',
      expo: {
        toolchainEnv: {
          npm_config_registry: 'http://127.0.0.1:9/',
          npm_config_cache: mkdtempSync(join(tmpdir(), 'mbm-npm-cache-')),
          npm_config_offline: 'false',
        },
      },
    });
    const token = server.token('alice');
    const project = await createProject(server.mcpUrl, token, { name: 'Offline' });
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'build it',
      kind: 'build',
    });
    const session = await waitIdle(server.mcpUrl, token, project.id, 240_000);
    expect(session.lastWorkflow.status).toBe('failed');
    expect(session.lastWorkflow.error.code).toBe('toolchain_install_failed');
    expect(session.lastWorkflow.error.message).toMatch(/npm registry could not be reached/);
    expect(session.lastWorkflow.error.message).toMatch(/mobile-builder-mcp toolchain install --sdk 58/);
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id });
    expect(page.messages.map((m: { content: string }) => m.content)).toContain(
      'Installing the Expo SDK 58 toolchain (once per server, about 1-2 min)…',
    );
    // Nothing half-installed is left to be mistaken for a toolchain.
    expect(readdirSync(join(server.dataDir, 'toolchains'))).toEqual([]);
  }, 300_000);
});
