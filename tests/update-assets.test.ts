/**
 * Expo update routes read a description (`expo-update.json`) that the build wrote. A command
 * builder's deploy is refused when its description's paths leave the folder (update-description
 * test); a forged one is still put in place here, in the published folder (as one published before
 * descriptions were checked would be), because the routes never trust its paths either: an asset path with `../`
 * (plain, `..%2F`, `%2E%2E%2F`) serves no file outside the deployment's folder on either listener,
 * a forged content type runs nothing on the shared host, and the deployment's public page never
 * shows the project's private "latest" update URL.
 */
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp } from '../src/app.js';
import type { RunningHttpServer } from '../src/transports/http-server.js';
import { createProject, startTestServer, tempDir, toolResult, waitIdle, type TestServer } from './helpers.js';

const SECRET = 'top-secret-marker-7f3a';
let server: TestServer;
let artifacts: RunningHttpServer;
let deploymentId: string;
let landingUrl: string;

/** A GET whose path is sent exactly as written (no URL normalisation of `..`). */
function rawGet(
  base: string,
  path: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('latin1') }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const asset = (path: string, contentType = 'application/javascript') => ({
  path,
  hash: 'x',
  key: 'y',
  contentType,
  fileExtension: '.js',
});

beforeAll(async () => {
  const forged = {
    format: 'expo-updates-v1',
    id: '11111111-2222-4333-8444-555555555555',
    createdAt: '2026-01-01T00:00:00.000Z',
    platform: 'ios',
    sdk: 58,
    runtimeVersions: ['exposdk:58.0.0'],
    launchAsset: asset('bundle.js'),
    assets: [
      asset('../../secret.txt'),
      asset('../../mobile-builder.db'),
      asset('../../../../../../../../etc/passwd'),
      asset('page.html', 'text/html'),
    ],
    expoClient: { name: 'Forged', slug: 'forged' },
  };
  const valid = { ...forged, assets: [asset('page.html', 'text/html')] };
  const script = [
    'mkdir -p out',
    "printf 'console.log(1)' > out/bundle.js",
    "printf '<script>document.title=1</script>' > out/page.html",
    `cat > out/expo-update.json <<'JSON'\n${JSON.stringify(valid)}\nJSON`,
    'echo "::deployment ios out"',
  ].join('\n');
  const dir = tempDir('mbm-forged-');
  const config = join(dir, 'builder.json');
  writeFileSync(config, JSON.stringify({ deploy: { command: script } }));
  server = await startTestServer({ builder: 'command', builderConfigFile: config });
  writeFileSync(join(server.dataDir, 'secret.txt'), SECRET);
  artifacts = await listenHttp(server.app, { host: '127.0.0.1', port: 0, serveMcp: false, artifactOrigin: true });
  const token = server.token('mallory');
  const project = await createProject(server.mcpUrl, token, { name: 'Forger', visibility: 'public' });
  await toolResult(server.mcpUrl, token, 'svc_send_message', {
    projectId: project.id,
    message: 'deploy',
    kind: 'deploy',
  });
  const session = await waitIdle(server.mcpUrl, token, project.id);
  expect(session.lastWorkflow.status).toBe('completed');
  const ios = session.previewUrls.find((p: any) => p.platform === 'ios');
  landingUrl = ios.url;
  deploymentId = ios.url.split('/').at(-2);
  writeFileSync(
    join(await server.app.artifactStore.localDir(deploymentId), 'expo-update.json'),
    JSON.stringify(forged),
  );
});

afterAll(async () => {
  await artifacts?.close();
  await server?.close();
});

describe('forged expo-update.json', () => {
  it('serves the files it names inside the deployment folder, and none outside, on both listeners', async () => {
    for (const base of [server.http.url, artifacts.url]) {
      const bundle = await rawGet(base, `/updates/assets/${deploymentId}/bundle.js`);
      expect(bundle.status).toBe(200);
      expect(bundle.body).toBe('console.log(1)');
      for (const target of ['../../secret.txt', '../../mobile-builder.db', '../../../../../../../../etc/passwd']) {
        for (const form of [target, target.replaceAll('../', '..%2F'), target.replaceAll('../', '%2E%2E%2F')]) {
          const res = await rawGet(base, `/updates/assets/${deploymentId}/${form}`);
          expect(res.status, `${base} ${form}`).toBe(404);
          expect(res.body).not.toContain(SECRET);
          expect(res.body).not.toContain('SQLite format');
          expect(res.body).not.toContain('root:');
        }
      }
    }
  });

  it('runs nothing a build names as HTML on the updates host', async () => {
    const page = await rawGet(artifacts.url, `/updates/assets/${deploymentId}/page.html`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain('sandbox');
    expect(page.headers['content-security-policy']).not.toContain('allow-same-origin');
  });

  it('a deployment page shows no "latest" update URL', async () => {
    const page = await rawGet(artifacts.url, new URL(landingUrl).pathname);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`/updates/d/${deploymentId}`);
    expect(page.body).not.toContain('/updates/latest/');
  });
});
