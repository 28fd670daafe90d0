/**
 * The project page's Environment section (docs/console.md, docs/security.md "Project environment")
 * over raw HTTP: the owner sets a plain variable and a secret and removes one; the page shows the
 * plain value and never the secret's; a bad name is refused under the form; another user sees no
 * section on a public project and is refused (403) when posting to it; the session lists the names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, startTestServer, toolResult, type TestServer } from '../helpers.js';
import { rawSignIn, type RawSession } from './console-helpers.js';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer({ builder: 'scripted' });
  base = server.http.url;
});

afterAll(async () => {
  await server?.close();
});

const post = (session: RawSession, path: string, fields: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie, Origin: base },
    body: new URLSearchParams({ csrf: session.csrf, ...fields }).toString(),
  });

describe('web console: project environment', () => {
  it('lets the owner set and remove variables, never shows a secret, and refuses everyone else', async () => {
    const token = server.token('erin');
    const project = await createProject(server.mcpUrl, token, { name: 'Env console', visibility: 'public' });
    const erin = await rawSignIn(base, token);
    const path = `/projects/${project.id}/env`;
    const page = async (session: RawSession) =>
      (await fetch(`${base}/projects/${project.id}`, { headers: { Cookie: session.cookie } })).text();

    expect(await page(erin)).toContain('No variables.');
    const secret = 'console-secret-4e1f9a';
    expect((await post(erin, path, { op: 'set', name: 'EXPO_PUBLIC_TITLE', value: 'Hello console' })).status).toBe(303);
    expect((await post(erin, path, { op: 'set', name: 'API_KEY', value: secret, secret: 'yes' })).status).toBe(303);
    expect((await post(erin, path, { op: 'set', name: 'OLD', value: 'gone soon' })).status).toBe(303);
    expect((await post(erin, path, { op: 'unset', name: 'OLD' })).status).toBe(303);

    const shown = await page(erin);
    expect(shown).toContain('<code>EXPO_PUBLIC_TITLE</code>');
    expect(shown).toContain('<code>Hello console</code>');
    expect(shown).toContain('<code>API_KEY</code>');
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain('<code>OLD</code>');

    const refused = await post(erin, path, { op: 'set', name: '1BAD', value: 'x' });
    expect(refused.status).toBe(400);
    const refusedPage = await refused.text();
    expect(refusedPage).toMatch(/id="env-title"[\s\S]*Invalid parameter: name must be letters/);

    const session = await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id });
    expect(session.environment).toEqual([
      { name: 'API_KEY', secret: true },
      { name: 'EXPO_PUBLIC_TITLE', secret: false },
    ]);
    expect(JSON.stringify(session)).not.toContain(secret);

    // Another user: a public project's page, but no Environment section, and no changes.
    const finn = await rawSignIn(base, server.token('finn'));
    const theirs = await page(finn);
    expect(theirs).toContain('Env console');
    expect(theirs).not.toContain('id="env-title"');
    expect(theirs).not.toContain('EXPO_PUBLIC_TITLE');
    expect((await post(finn, path, { op: 'unset', name: 'API_KEY' })).status).toBe(403);
    expect(
      (await toolResult(server.mcpUrl, token, 'svc_get_session', { projectId: project.id })).environment,
    ).toHaveLength(2);
  });
});
