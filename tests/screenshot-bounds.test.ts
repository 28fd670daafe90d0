/**
 * Screenshots start a bounded number of browsers (docs/hosts.md "Screenshots"): a tenant asking for many
 * projects' screenshots at once used to start one headless Chromium per project, all at once
 * (eight projects: eight browsers and about 1 GB). The browser here is a stand-in script that
 * records its start and holds until the test releases it, so the test sees how many run at once
 * without any clock.
 */
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_TURNED_OFF } from '../src/builders/process-sandbox.js';
import { SCREENSHOTS_PER_USER, SCREENSHOTS_RUNNING, SCREENSHOTS_WAITING } from '../src/services/preview-screenshots.js';
import { createProject, startTestServer, tempDir, toolResult, waitFor, waitIdle, type TestServer } from './helpers.js';

let server: TestServer;
let state: string;

beforeAll(async () => {
  state = tempDir('mbm-fake-browser-');
  const browser = join(state, 'fake-browser');
  // Records its start, holds until `release` exists (bounded: the launch's own 30 s bound ends it
  // anyway), then writes a picture where --screenshot= says.
  writeFileSync(
    browser,
    `#!/bin/sh\ntouch "${state}/started.$$"\ni=0\nwhile [ ! -e "${state}/release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nfor a in "$@"; do case "$a" in --screenshot=*) printf 'PNG' > "\${a#--screenshot=}";; esac; done\n`,
  );
  chmodSync(browser, 0o755);
  // The stand-in writes its marks beside itself, outside any sandbox's binds: run it unconfined.
  server = await startTestServer({ browser, buildSandbox: SANDBOX_TURNED_OFF });
});
afterAll(async () => {
  writeFileSync(join(state, 'release'), '');
  await server.close();
});

const started = () => readdirSync(state).filter((f) => f.startsWith('started.')).length;

/** A project of `user` with a published web preview. */
async function builtProject(user: string): Promise<string> {
  const token = server.token(user);
  const { id } = await createProject(server.mcpUrl, token);
  await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId: id, message: 'Build it', kind: 'build' });
  await waitIdle(server.mcpUrl, token, id);
  return id as string;
}

const shoot = (user: string, projectId: string) =>
  toolResult(server.mcpUrl, server.token(user), 'svc_get_session', { projectId, screenshot: true });

it(`runs at most ${SCREENSHOTS_RUNNING} browsers, queues ${SCREENSHOTS_WAITING}, and tells the others (and a user past ${SCREENSHOTS_PER_USER}) to ask again`, async () => {
  // One user, one project more than their bound: the extra one answers at once.
  const own = [];
  for (let i = 0; i <= SCREENSHOTS_PER_USER; i++) own.push(await builtProject('alice'));
  // Other users, one project each: enough to fill the browsers and the queue, and one more.
  const others: Array<[string, string]> = [];
  for (let i = 0; i < SCREENSHOTS_RUNNING + SCREENSHOTS_WAITING + 1 - SCREENSHOTS_PER_USER; i++)
    others.push([`user${i}`, await builtProject(`user${i}`)]);

  const aliceCalls = own.slice(0, SCREENSHOTS_PER_USER).map((id) => shoot('alice', id));
  await waitFor(
    () => started() >= Math.min(SCREENSHOTS_PER_USER, SCREENSHOTS_RUNNING),
    15_000,
    'the first browsers to start',
  );
  const aliceExtra = await shoot('alice', own[SCREENSHOTS_PER_USER]!);
  expect(aliceExtra.screenshot).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('busy') });

  // The other users' calls: the first to answer, while every browser is held, is a "busy" one.
  const otherCalls = others.map(([user, id]) => shoot(user, id));
  const first = await Promise.race(otherCalls);
  expect(first.screenshot).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('busy') });
  // The browsers of the calls that got one start (a slot that frees is never taken by more).
  await waitFor(() => started() === SCREENSHOTS_RUNNING, 15_000, 'every browser slot to start a browser');

  writeFileSync(join(state, 'release'), '');
  const all = await Promise.all([...aliceCalls, ...otherCalls]);
  expect(all.filter((r) => r.screenshot.status === 'taken')).toHaveLength(SCREENSHOTS_RUNNING + SCREENSHOTS_WAITING);
  expect(started()).toBe(SCREENSHOTS_RUNNING + SCREENSHOTS_WAITING);
  expect(existsSync(join(state, 'release'))).toBe(true);
});

it('a screenshot that waits for its browser past the per-message deadline still answers with the picture', async () => {
  const held = tempDir('mbm-fake-browser-');
  const browser = join(held, 'fake-browser');
  writeFileSync(
    browser,
    `#!/bin/sh\ntouch "${held}/started.$$"\ni=0\nwhile [ ! -e "${held}/release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nfor a in "$@"; do case "$a" in --screenshot=*) printf 'PNG' > "\${a#--screenshot=}";; esac; done\n`,
  );
  chmodSync(browser, 0o755);
  const short = await startTestServer({ browser, requestDeadlineMs: 1000, buildSandbox: SANDBOX_TURNED_OFF });
  try {
    const token = short.token('alice');
    const { id } = await createProject(short.mcpUrl, token);
    await toolResult(short.mcpUrl, token, 'svc_send_message', { projectId: id, message: 'Build it', kind: 'build' });
    await waitIdle(short.mcpUrl, token, id);
    const shot = toolResult(short.mcpUrl, token, 'svc_get_session', { projectId: id, screenshot: true });
    await waitFor(() => readdirSync(held).some((f) => f.startsWith('started.')), 15_000, 'the browser to start');
    // Let the 1 s per-message deadline pass while the browser is held (a busier machine only
    // lets more time pass: the check cannot pass by luck).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    writeFileSync(join(held, 'release'), '');
    expect((await shot).screenshot).toMatchObject({ status: 'taken' });
  } finally {
    writeFileSync(join(held, 'release'), '');
    await short.close();
  }
});
