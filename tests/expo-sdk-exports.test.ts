/**
 * The expo builder's deploy across several Expo SDKs, with stand-in toolchains (a `tsc` that
 * passes, an `expo export` that writes a small export or fails on purpose), so the rules of a
 * partial failure are tested in seconds; tests/expo/expo-deploy.test.ts deploys the real SDK 58
 * and SDK 54 toolchains. When one SDK's export fails, the deploy completes for the others, says
 * which SDK failed and why, and its manifest route tells that SDK's Expo Go so; when every SDK
 * fails, the deploy fails.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProject,
  rawHttp,
  startTestServer,
  tempDir,
  toolResult,
  waitIdle,
  waitQuestion,
  type TestServer,
} from './helpers.js';

const SHIPPED = join(import.meta.dirname, '..', 'toolchains');

/** A stand-in `expo` CLI: `export` writes a web page or a native export, or fails when told to. */
const FAKE_EXPO_CLI = `#!/usr/bin/env node
const fs = require('fs'), path = require('path');
const args = process.argv.slice(2);
const out = args[args.indexOf('--output-dir') + 1];
const platforms = args.filter((_, i) => args[i - 1] === '--platform');
const sdk = ${'${SDK}'};
if (${'${FAIL}'} && !platforms.includes('web')) {
  console.error('Error: SDK ' + sdk + ' export broke on purpose');
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
if (platforms.includes('web')) {
  fs.writeFileSync(path.join(out, 'index.html'), '<!doctype html><title>app</title><p>web of SDK ' + sdk + '</p>');
} else {
  const fileMetadata = {};
  for (const p of platforms) {
    const bundle = '_expo/static/js/' + p + '/index-' + sdk + '.hbc';
    fs.mkdirSync(path.join(out, path.dirname(bundle)), { recursive: true });
    fs.writeFileSync(path.join(out, bundle), Buffer.concat([Buffer.from('c61fbc03c103191f', 'hex'), Buffer.from(p + ' ' + sdk)]));
    fileMetadata[p] = { bundle, assets: [] };
  }
  fs.writeFileSync(path.join(out, 'metadata.json'), JSON.stringify({ version: 0, bundler: 'metro', fileMetadata }));
}
`;

/** A folder of installed-looking toolchains for `sdks` whose native exports fail for the SDKs in `failing`. */
function standInToolchains(sdks: number[], failing: number[]): string {
  const dir = tempDir('mbm-standin-toolchains-');
  for (const sdk of sdks) {
    const root = join(dir, `expo-sdk-${sdk}`);
    const lock = readFileSync(join(SHIPPED, `expo-sdk-${sdk}`, 'package-lock.json'));
    mkdirSync(join(root, 'node_modules', 'expo', 'bin'), { recursive: true });
    mkdirSync(join(root, 'node_modules', 'typescript', 'bin'), { recursive: true });
    writeFileSync(
      join(root, 'node_modules', 'expo', 'bin', 'cli'),
      FAKE_EXPO_CLI.replace('${SDK}', String(sdk)).replace('${FAIL}', String(failing.includes(sdk))),
    );
    writeFileSync(join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '#!/usr/bin/env node\nprocess.exit(0);\n');
    chmodSync(join(root, 'node_modules', 'expo', 'bin', 'cli'), 0o755);
    writeFileSync(
      join(root, '.svc-toolchain.json'),
      JSON.stringify({ sdk, lockSha256: createHash('sha256').update(lock).digest('hex') }),
    );
  }
  return dir;
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Deploys a new project (answering the app identifier question) and returns its settled session. */
async function deploy(s: TestServer, token: string): Promise<{ session: any; projectId: string }> {
  const project = await createProject(s.mcpUrl, token, { name: 'Two SDKs' });
  await toolResult(s.mcpUrl, token, 'svc_send_message', { projectId: project.id, message: 'deploy', kind: 'deploy' });
  const asking = await waitQuestion(s.mcpUrl, token, project.id, 120_000);
  await toolResult(s.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'com.example.two',
    questionId: asking.pendingQuestion.questionId,
  });
  return { session: await waitIdle(s.mcpUrl, token, project.id, 120_000), projectId: project.id };
}

const expoGo = (sdk: number) => ({
  'expo-protocol-version': '1',
  'expo-platform': 'android',
  'expo-runtime-version': `exposdk:${sdk}.0.0`,
  accept: 'application/expo+json,application/json',
});

describe('a deploy for several Expo SDKs', () => {
  it('completes for the SDKs that exported when one fails, and says which failed and why', async () => {
    server = await startTestServer({
      builder: 'expo',
      expo: {
        toolchainsDir: standInToolchains([58, 54], [54]),
        metroCacheDir: tempDir(),
        installToolchain: false,
        agent: 'none',
        sdks: [58, 54],
      },
    });
    const token = server.token('alice');
    const { session, projectId } = await deploy(server, token);
    expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId, limit: 200 });
    const texts = page.messages.map((m: { content: string }) => m.content).join('\n');
    expect(texts).toMatch(/Deploy #1: web, ios, android\. Deployed Two SDKs as com\.example\.two for Expo SDK 58:/);
    expect(texts).toMatch(/Expo SDK 54 is not served: its export failed \(.*SDK 54 export broke on purpose/);

    const android = session.lastWorkflow.previewUrls.find(
      (p: { kind: string; platform: string }) => p.kind === 'deployment' && p.platform === 'android',
    );
    const id = /\/deployments\/([0-9a-f-]{36})\/$/.exec(android.url)![1]!;
    const ok = await rawHttp(`${server.http.url}/updates/d/${id}`, { headers: expoGo(58) });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).extra.expoClient.sdkVersion).toBe('58.0.0');
    const refused = await rawHttp(`${server.http.url}/updates/d/${id}`, { headers: expoGo(54) });
    expect(refused.status).toBe(404);
    const body = JSON.parse(refused.text);
    expect(body.sdks).toEqual([58]);
    expect(body.error).toMatch(
      /not built for Expo SDK 54 .*serves Expo SDK 58.*Its SDK 54 export failed: .*broke on purpose/,
    );
    const landing = await rawHttp(android.url);
    expect(landing.text).toMatch(/SDK 54: not served \(its export failed: .*broke on purpose/);
  });

  it('fails when every SDK fails', async () => {
    server = await startTestServer({
      builder: 'expo',
      expo: {
        toolchainsDir: standInToolchains([58, 54], [58, 54]),
        metroCacheDir: tempDir(),
        installToolchain: false,
        agent: 'none',
        sdks: [58, 54],
      },
    });
    const token = server.token('alice');
    const { session } = await deploy(server, token);
    expect(session.lastWorkflow.status).toBe('failed');
    expect(session.lastWorkflow.error.message).toMatch(/\(Expo SDK 58\) exited with code 1/);
  });
});
