/**
 * A failed screenshot is remembered per preview, and one user holds at most one browser (docs/hosts.md
 * "Screenshots"). The browser is a stand-in script that records each start; it fails at once
 * (no image) while `fail` exists, else holds until `release` exists and writes a picture, so the
 * test sees every browser start without any clock.
 */
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../src/builders/process-sandbox.js';
import { createProject, startTestServer, tempDir, toolResult, waitFor, waitIdle, type TestServer } from './helpers.js';

let server: TestServer;
let state: string;

beforeAll(async () => {
  state = tempDir('mbm-fake-browser-');
  const browser = join(state, 'fake-browser');
  writeFileSync(
    browser,
    `#!/bin/sh\ntouch "${state}/started.$$"\n[ -e "${state}/fail" ] && exit 1\ni=0\nwhile [ ! -e "${state}/release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nfor a in "$@"; do case "$a" in --screenshot=*) printf 'PNG' > "\${a#--screenshot=}";; esac; done\n`,
  );
  chmodSync(browser, 0o755);
  server = await startTestServer({ browser, buildSandbox: SANDBOX_TURNED_OFF });
});
afterAll(async () => {
  writeFileSync(join(state, 'release'), '');
  await server.close();
});

const started = () => readdirSync(state).filter((f) => f.startsWith('started.')).length;

/** A project of `user` with a published web preview. */
async function builtProject(user: string, args: Record<string, unknown> = {}): Promise<string> {
  const token = server.token(user);
  const { id } = await createProject(server.mcpUrl, token, args);
  await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: id, message: 'Build it', kind: 'build' });
  await waitIdle(server.mcpUrl, token, id);
  return id as string;
}

const shoot = async (user: string, projectId: string) =>
  (await toolResult(server.mcpUrl, server.token(user), 'svc_get_session', { projectId, screenshot: true })).screenshot;

it('one user holds one browser: their second screenshot while the first renders is busy', async () => {
  const [first, second] = [await builtProject('alice'), await builtProject('alice')];
  const before = started();
  const held = shoot('alice', first);
  await waitFor(() => started() > before, 15_000, 'the browser to start');
  expect(await shoot('alice', second)).toMatchObject({
    status: 'unavailable',
    reason: expect.stringContaining('busy'),
    busy: true,
  });
  expect(started()).toBe(before + 1);
  writeFileSync(join(state, 'release'), '');
  expect(await held).toMatchObject({ status: 'taken' });
  rmSync(join(state, 'release'));
}, 60_000);

it('a failed screenshot is not retried on the next requests: they answer the failure without a browser', async () => {
  const id = await builtProject('bob', { visibility: 'public' });
  writeFileSync(join(state, 'fail'), '');
  const before = started();
  const failed = await shoot('bob', id);
  expect(failed).toMatchObject({
    status: 'unavailable',
    reason: expect.stringContaining('the browser wrote no image'),
  });
  // Not a busy answer: asking again gives the same failure, not a picture.
  expect(failed).not.toHaveProperty('busy');
  expect(started()).toBe(before + 1);
  // The browser would work now: the failure is still remembered, by every user's request.
  rmSync(join(state, 'fail'));
  for (const user of ['bob', 'bob', 'carol']) {
    expect(await shoot(user, id)).toMatchObject({
      status: 'unavailable',
      reason: expect.stringContaining(
        'the browser wrote no image (exit 1) (the last attempt failed; it is tried again in 10 min)',
      ),
    });
  }
  expect(started()).toBe(before + 1);
}, 60_000);
