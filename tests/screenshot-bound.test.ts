/**
 * Screenshot launches are bounded (README "Screenshots"): one browser at a time per user and two
 * server-wide, so no caller can start a browser per project at once. A call past the bound answers
 * at once without an image, and `screenshot.reason` says why. The "browser" here is a script that
 * records its start and holds until the test releases it, so the count is read from states.
 */
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, startTestServer, tempDir, toolResult, waitFor, waitIdle, type TestServer } from './helpers.js';

describe('screenshot launches', () => {
  let server: TestServer;
  let marks: string;
  let release: string;

  beforeAll(async () => {
    marks = tempDir('mbm-shot-marks-');
    release = join(marks, 'release');
    const browser = join(tempDir('mbm-fake-browser-'), 'chromium');
    // Records its start, waits for the release file, then writes a one-byte "image".
    writeFileSync(
      browser,
      `#!${process.execPath}\nconst fs = require('node:fs');\nfs.writeFileSync(${JSON.stringify(marks)} + '/started-' + process.pid, '');\nconst out = process.argv.find((a) => a.startsWith('--screenshot=')).slice(13);\nconst t = setInterval(() => { if (fs.existsSync(${JSON.stringify(release)})) { clearInterval(t); fs.writeFileSync(out, 'P'); } }, 20);\n`,
    );
    chmodSync(browser, 0o755);
    server = await startTestServer({ browser });
  });
  afterAll(async () => {
    writeFileSync(release, '');
    await server.close();
  });

  it('start at most one browser per user and two in all; the others answer at once with the reason', async () => {
    const built: Array<{ token: string; projectId: string }> = [];
    for (const user of ['alice', 'alice', 'alice', 'bob', 'carol']) {
      const token = server.token(user);
      const projectId = (await createProject(server.mcpUrl, token)).id;
      await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message: 'Build it', kind: 'build' });
      await waitIdle(server.mcpUrl, token, projectId);
      built.push({ token, projectId });
    }
    const answered: any[] = [];
    const calls = built.map(({ token, projectId }) =>
      toolResult(server.mcpUrl, token, 'svc_get_session', { projectId, screenshot: true }).then((r) => {
        answered.push(r.screenshot);
        return r.screenshot;
      }),
    );
    const started = () => readdirSync(marks).filter((f) => f.startsWith('started-')).length;
    // Every call has either started a browser or answered.
    await waitFor(() => started() + answered.length >= built.length, 20_000, 'every call started a browser or answered');
    expect(started()).toBe(2);
    expect(answered).toHaveLength(3);
    for (const shot of answered) expect(shot).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('other screenshots') });
    writeFileSync(release, '');
    const shots = await Promise.all(calls);
    expect(shots.filter((s) => s.status === 'taken')).toHaveLength(2);
    expect(existsSync(release)).toBe(true);
  });

  it("move the call's per-message deadline out by the screenshot's own bound, as a wait does", async () => {
    const token = server.token('dora');
    const projectId = (await createProject(server.mcpUrl, token)).id;
    await toolResult(server.mcpUrl, token, 'svc_send_message', { projectId, message: 'Build it', kind: 'build' });
    await waitIdle(server.mcpUrl, token, projectId);
    const caller = server.app.tokens.authenticate(token);
    const asked: number[] = [];
    const call = (args: Record<string, unknown>) => server.app.tools.call({ name: 'svc_get_session', arguments: { projectId, ...args } }, caller, { extendDeadline: (ms) => asked.push(ms) });
    await call({ screenshot: true });
    // The browser alone may take SCREENSHOT_TIMEOUT_MS (30 s), the whole default deadline.
    expect(asked).toEqual([30_000]);
    asked.length = 0;
    await call({ screenshot: true, waitSeconds: 1 });
    expect(asked).toEqual([31_000]);
  });
});
