/**
 * `token revoke` takes effect before the command returns on a server on the same SQLite data dir
 * (docs/contract.md "Tokens and security"): the server's token cache looks for other processes' commits on every request,
 * so the first request after the command is refused. It used to be accepted until the server's
 * next 250 ms look. Each round revokes a token the server has just cached, with the real CLI.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, callTool, runCommand, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

it('the first request after `token revoke` returns is refused, round after round', async () => {
  for (let round = 0; round < 3; round++) {
    const token = server.token(`revoked-${round}`);
    // Cached by the server now.
    expect((await callTool(server.mcpUrl, token, 'svc_list_projects')).status).toBe(200);
    const [row] = (await server.app.store.repos.tokens.list()).filter((t) => t.user.name === `revoked-${round}`);
    const revoked = await runCommand(
      process.execPath,
      [BIN, 'token', 'revoke', row!.token.id, '--data-dir', server.dataDir],
      { timeoutMs: 60_000 },
    );
    expect(revoked.status, revoked.stderr).toBe(0);
    const refused = await callTool(server.mcpUrl, token, 'svc_list_projects');
    expect([refused.status, refused.json.error?.code]).toEqual([401, -32001]);
  }
}, 120_000);
