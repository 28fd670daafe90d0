/**
 * Console sessions from the command line (docs/console.md "Web console"): `token list` shows each live
 * session (who, signed in with which token prefix or a login code, when) and never a secret;
 * `token revoke ID` signs that browser out, including a session opened with a login code, which
 * no token revocation would end. Against the real bin and the CLI on its data dir.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliToken, runCli, spawnHttpServer, type SpawnedServer } from '../bin-helpers.js';
import { tempDir } from '../helpers.js';
import { rawSignIn } from './console-helpers.js';

let dataDir: string;
let server: SpawnedServer;

beforeAll(async () => {
  dataDir = tempDir();
  cliToken(dataDir, 'dora');
  server = await spawnHttpServer(dataDir);
});
afterAll(async () => {
  await server?.stop();
});

describe('console sessions in token list and token revoke', () => {
  it('lists a login-code session and ends it; the browser is signed out at its next request', async () => {
    const token = cliToken(dataDir, 'erin');
    const code = runCli(['login-code', '--user', 'erin', '--data-dir', dataDir]).stdout.trim().split('\n').at(-1)!;
    const byCode = await rawSignIn(server.url, code);
    const byToken = await rawSignIn(server.url, token);

    const listed = JSON.parse(
      runCli(['token', 'list', '--user', 'erin', '--json', '--data-dir', dataDir]).stdout,
    ) as Array<Record<string, string>>;
    const sessions = listed.filter((row) => row.kind === 'web_session');
    expect(sessions).toHaveLength(2);
    expect(sessions.map((s) => s.signedInWith)).toContain('login code');
    const viaToken = sessions.find((s) => s.signedInWith !== 'login code')!;
    expect(token.startsWith(viaToken.signedInWith!.replace(/[.…]+$/, ''))).toBe(true);
    expect(sessions.every((s) => s.user === 'erin' && s.id && s.expiresAt)).toBe(true);
    const table = runCli(['token', 'list', '--data-dir', dataDir]).stdout;
    expect(table).toContain('Web console sessions');
    for (const secret of [token, code, byCode.cookie.split('=')[1]!]) expect(table).not.toContain(secret);

    // Revoking erin's API token ends the session it opened, not the login-code one.
    const tokenId = listed.find((row) => row.kind === 'api_token')!.id!;
    expect(runCli(['token', 'revoke', tokenId, '--data-dir', dataDir]).status).toBe(0);
    expect(
      (await fetch(`${server.url}/projects`, { redirect: 'manual', headers: { Cookie: byToken.cookie } })).status,
    ).toBe(303);
    expect(
      (await fetch(`${server.url}/projects`, { redirect: 'manual', headers: { Cookie: byCode.cookie } })).status,
    ).toBe(200);

    const loginSession = sessions.find((s) => s.signedInWith === 'login code')!;
    const ended = runCli(['token', 'revoke', loginSession.id!, '--data-dir', dataDir]);
    expect(ended.status).toBe(0);
    expect(ended.stdout).toContain(`Ended web console session ${loginSession.id}`);
    const after = await fetch(`${server.url}/projects`, { redirect: 'manual', headers: { Cookie: byCode.cookie } });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/signin');
    const again = runCli(['token', 'revoke', loginSession.id!, '--data-dir', dataDir]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('No token, OAuth grant or console session');
  });
});
