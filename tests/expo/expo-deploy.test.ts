/**
 * The `expo` builder's deploy on the real toolchain: native bundles are Hermes bytecode, the
 * Expo Updates v1 manifest parses as multipart with a standard parser, every asset's bytes match
 * the manifest's SHA-256 and MD5, the refusals answer as the protocol says, a signed manifest
 * verifies, the landing page's QR code decodes to the exp:// URL, and so do the QR codes of the
 * web console's project page, beside the exp:// links whose manifests answer. One deployment
 * serves every store Expo Go: SDK 58 (Google Play) and SDK 54 (App Store), each asked with Expo
 * Go's own headers, gets a manifest of its SDK whose launch asset is Hermes bytecode; SDK 52 gets
 * an answer that names the SDKs served and how to get a matching Expo Go.
 */
import { createHash, createVerify, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, tempDir, toolResult, waitIdle, waitQuestion, type TestServer } from '../helpers.js';
import { ensureToolchain, launchChromium, startExpoServer } from './expo-helpers.js';

const require = createRequire(import.meta.url);
const jsQR = require('jsqr') as typeof import('jsqr').default;
const Dicer = require('dicer') as new (options: {
  boundary: string;
}) => NodeJS.WritableStream & { on(event: string, fn: (...args: any[]) => void): void };

let server: TestServer;
let token: string;
let browser: Browser | null;
let publicKey: string;

beforeAll(async () => {
  await ensureToolchain();
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  publicKey = keys.publicKey;
  const keyFile = join(tempDir(), 'updates-key.pem');
  writeFileSync(keyFile, keys.privateKey);
  server = await startExpoServer({}, { updatesSigningKeyFile: keyFile });
  token = server.token('alice');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** GET with raw headers; the body as bytes (not decoded). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, any>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Parses a multipart body with dicer (a standard streaming multipart parser). */
function parseMultipart(
  contentType: string,
  body: Buffer,
): Promise<Array<{ headers: Record<string, string[]>; body: Buffer }>> {
  const boundary = /boundary=([^;]+)/.exec(contentType)![1]!;
  return new Promise((resolve, reject) => {
    const parts: Array<{ headers: Record<string, string[]>; body: Buffer }> = [];
    const dicer = new Dicer({ boundary });
    dicer.on('part', (part: any) => {
      let headers: Record<string, string[]> = {};
      const chunks: Buffer[] = [];
      part.on('header', (h: Record<string, string[]>) => (headers = h));
      part.on('data', (c: Buffer) => chunks.push(c));
      part.on('end', () => parts.push({ headers, body: Buffer.concat(chunks) }));
    });
    dicer.on('finish', () => resolve(parts));
    dicer.on('error', reject);
    dicer.end(body);
  });
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const EXPO_GO = {
  'expo-protocol-version': '1',
  'expo-platform': 'ios',
  'expo-runtime-version': 'exposdk:58.0.0',
  accept: 'multipart/mixed,application/expo+json,application/json',
};

describe('expo builder: deploy and Expo Updates', () => {
  it('deploys web, ios and android; serves the native ones as Expo updates', async () => {
    const project = await createProject(server.mcpUrl, token, { name: 'Habit Tracker' });
    // No build yet: the deploy builds first, then asks for the app identifier once.
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'deploy it',
      kind: 'deploy',
    });
    const asking = await waitQuestion(server.mcpUrl, token, project.id, 300_000);
    expect(asking.pendingQuestion.prompt).toMatch(/app identifier/);
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'com.example.habits',
      questionId: asking.pendingQuestion.questionId,
    });
    const session = await waitIdle(server.mcpUrl, token, project.id, 540_000);
    expect(session.lastWorkflow.status, JSON.stringify(session.lastWorkflow.error)).toBe('completed');
    const deployments = session.lastWorkflow.previewUrls.filter((p: { kind: string }) => p.kind === 'deployment');
    expect(deployments.map((d: { platform: string }) => d.platform).sort()).toEqual(['android', 'ios', 'web']);
    // One deploy, one number, shared by its three platforms (docs/contract.md "Tools", Deploy numbers).
    expect(deployments.map((d: { deployNumber: number }) => d.deployNumber)).toEqual([1, 1, 1]);
    const ios = deployments.find((d: { platform: string }) => d.platform === 'ios');
    const iosId = /\/deployments\/([0-9a-f-]{36})\/$/.exec(ios.url)![1]!;
    const base = server.http.url;

    const workspace = join(server.dataDir, 'workspaces', project.id);
    expect(JSON.parse(readFileSync(join(workspace, 'app.json'), 'utf8')).expo).toMatchObject({
      ios: { bundleIdentifier: 'com.example.habits' },
      android: { package: 'com.example.habits' },
    });

    // The manifest, multipart, parsed with a standard parser.
    const manifestRes = await get(`${base}/updates/d/${iosId}`, EXPO_GO);
    expect(manifestRes.status).toBe(200);
    expect(manifestRes.headers['expo-protocol-version']).toBe('1');
    expect(manifestRes.headers['expo-sfv-version']).toBe('0');
    expect(manifestRes.headers['cache-control']).toBe('private, max-age=0');
    expect(manifestRes.headers['content-type']).toMatch(/^multipart\/mixed; boundary=/);
    const parts = await parseMultipart(manifestRes.headers['content-type'], manifestRes.body);
    const manifestPart = parts.find((p) => /name="manifest"/.test(p.headers['content-disposition']![0]!))!;
    expect(manifestPart.headers['content-type']![0]).toMatch(/^application\/json/);
    const manifest = JSON.parse(manifestPart.body.toString('utf8'));
    expect(manifest).toMatchObject({
      runtimeVersion: 'exposdk:58.0.0',
      extra: { expoClient: { name: 'Habit Tracker', sdkVersion: '58.0.0' } },
    });
    expect(manifest.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(manifest.extra.scopeKey).toMatch(/^@anonymous\//);
    expect(manifestPart.headers['expo-signature']).toBeUndefined();

    // The launch asset is Hermes bytecode; every asset's bytes match the manifest.
    const launch = await get(manifest.launchAsset.url);
    expect(launch.status).toBe(200);
    expect(launch.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(launch.body.subarray(0, 8).toString('hex')).toBe('c61fbc03c103191f');
    expect(sha256(launch.body)).toBe(manifest.launchAsset.hash);
    expect(md5(launch.body)).toBe(manifest.launchAsset.key);
    expect(manifest.assets.length).toBeGreaterThan(0);
    for (const asset of manifest.assets) {
      const res = await get(asset.url);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(asset.contentType);
      expect(sha256(res.body)).toBe(asset.hash);
      expect(md5(res.body)).toBe(asset.key);
      expect(asset.fileExtension).toMatch(/^\.\w+$/);
    }
    const gz = await get(manifest.launchAsset.url, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(sha256(gunzipSync(gz.body))).toBe(manifest.launchAsset.hash);
    const br = await get(manifest.launchAsset.url, { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');

    // Every store Expo Go, with its own request headers: each SDK's manifest names that SDK and
    // its launch asset is a Hermes bundle whose hash the manifest gives.
    for (const sdk of [58, 54]) {
      for (const platform of ['ios', 'android']) {
        const res = await get(`${base}/updates/d/${iosId}`, {
          ...EXPO_GO,
          'expo-platform': platform,
          'expo-runtime-version': `exposdk:${sdk}.0.0`,
          accept: 'application/expo+json,application/json',
        });
        expect(res.status, `SDK ${sdk} ${platform}`).toBe(200);
        const m = JSON.parse(res.body.toString());
        expect(m).toMatchObject({
          runtimeVersion: `exposdk:${sdk}.0.0`,
          extra: { expoClient: { sdkVersion: `${sdk}.0.0`, name: 'Habit Tracker' } },
        });
        expect(m.launchAsset.url).toContain(`/sdk-${sdk}/_expo/static/js/${platform}/`);
        const bundle = await get(m.launchAsset.url);
        expect(bundle.body.subarray(0, 8).toString('hex'), `SDK ${sdk} ${platform} is Hermes bytecode`).toBe(
          'c61fbc03c103191f',
        );
        expect(sha256(bundle.body)).toBe(m.launchAsset.hash);
      }
    }
    const served = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 200 });
    expect(served.messages.map((m: { content: string }) => m.content).join('\n')).toMatch(
      /Deploy #1: web, ios, android\. Deployed Habit Tracker as com\.example\.habits for Expo SDK 58 and 54/,
    );

    // JSON by negotiation; the pinned URL of the ios deployment also serves android.
    const json = await get(`${base}/updates/d/${iosId}`, {
      ...EXPO_GO,
      'expo-platform': 'android',
      accept: 'application/expo+json',
    });
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/expo\+json/);
    expect(JSON.parse(json.body.toString()).launchAsset.url).toContain('/_expo/static/js/android/');

    // Refusals.
    expect((await get(`${base}/updates/d/${iosId}`, { ...EXPO_GO, 'expo-platform': 'web' })).status).toBe(400);
    const { 'expo-platform': _p, ...noPlatform } = EXPO_GO;
    expect((await get(`${base}/updates/d/${iosId}`, noPlatform)).status).toBe(400);
    const { 'expo-runtime-version': _r, ...noRuntime } = EXPO_GO;
    expect((await get(`${base}/updates/d/${iosId}`, noRuntime)).status).toBe(400);
    // An Expo Go of an SDK the deployment was not built for: not a bare 404, an answer that says what to do.
    const old = await get(`${base}/updates/d/${iosId}`, { ...EXPO_GO, 'expo-runtime-version': 'exposdk:52.0.0' });
    expect(old.status).toBe(404);
    const oldBody = JSON.parse(old.body.toString());
    expect(oldBody).toMatchObject({ runtimeVersion: 'exposdk:52.0.0', sdks: [58, 54] });
    expect(oldBody.error).toMatch(/not built for Expo SDK 52.*serves Expo SDK 58 and 54/);
    expect(oldBody.howToGetExpoGo).toMatch(/App Store runs SDK 54.*development build/);
    expect((await get(`${base}/updates/d/${iosId}`, { ...EXPO_GO, accept: 'text/html' })).status).toBe(406);
    expect((await get(`${base}/updates/d/00000000-0000-4000-8000-000000000000`, EXPO_GO)).status).toBe(404);
    expect((await get(`${base}/updates/latest/not-a-token`, EXPO_GO)).status).toBe(404);
    expect((await get(`${base}/updates/assets/${iosId}/../../mobile-builder.db`)).status).toBe(404);

    // Signing: keyid "main" is signed and verifies; Expo Go's "expo-root" gets an unsigned manifest.
    const signed = await get(`${base}/updates/d/${iosId}`, {
      ...EXPO_GO,
      'expo-expect-signature': 'sig, keyid="main", alg="rsa-v1_5-sha256"',
    });
    const signedPart = (await parseMultipart(signed.headers['content-type'], signed.body)).find((p) =>
      /name="manifest"/.test(p.headers['content-disposition']![0]!),
    )!;
    const signature = signedPart.headers['expo-signature']![0]!;
    expect(signature).toMatch(/keyid="main"/);
    const sig = /sig="([^"]+)"/.exec(signature)![1]!;
    expect(createVerify('RSA-SHA256').update(signedPart.body).verify(publicKey, sig, 'base64')).toBe(true);
    const root = await get(`${base}/updates/d/${iosId}`, {
      ...EXPO_GO,
      'expo-expect-signature': 'sig, keyid="expo-root", alg="rsa-v1_5-sha256"',
    });
    expect(root.status).toBe(200);
    const rootPart = (await parseMultipart(root.headers['content-type'], root.body)).find((p) =>
      /name="manifest"/.test(p.headers['content-disposition']![0]!),
    )!;
    expect(rootPart.headers['expo-signature']).toBeUndefined();

    // The secret "latest" URL from the result message.
    const page = await toolResult(server.mcpUrl, token, 'svc_get_messages', { projectId: project.id, limit: 200 });
    const result = page.messages
      .map((m: { content: string }) => m.content)
      .find((c: string) => c.includes('/updates/latest/'));
    const latestPath = /(\/updates\/latest\/[A-Za-z0-9_-]{32})/.exec(result)![1]!;
    expect(latestPath).not.toContain(project.id);
    const latest = await get(`${base}${latestPath}`, { ...EXPO_GO, accept: 'application/json' });
    expect(JSON.parse(latest.body.toString()).id).toBe(manifest.id);

    // The landing page is public: it never names the private latest URL; its QR code decodes to the exp:// URL.
    const landing = (await get(ios.url)).body.toString();
    expect(landing).not.toContain('/updates/latest/');
    expect(landing).toMatch(/id="sdks">Serves Expo SDK <strong>58 and 54<\/strong>/);
    if (browser) {
      const tab = await browser.newPage({ viewport: { width: 800, height: 900 } });
      await tab.goto(ios.url);
      const png = PNG.sync.read(await tab.locator('#qr').screenshot());
      await tab.close();
      const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
      expect(decoded?.data).toBe(`${base.replace('http:', 'exp:')}/updates/d/${iosId}`);

      // The web console's project page: each native deployment's QR code decodes to the exp://
      // link shown beside it, and that link's manifest answers Expo Go.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const consolePage = await context.newPage();
        await consolePage.goto(`${base}/signin`);
        await consolePage.fill('#credential', token);
        await Promise.all([consolePage.waitForURL(`${base}/projects`), consolePage.click('#sign-in')]);
        await consolePage.goto(`${base}/projects/${project.id}`);
        for (const platform of ['ios', 'android'] as const) {
          const card = consolePage.locator(`#deployments .deployment[data-platform="${platform}"]`);
          const link = card.locator('a.exp-link');
          const shown = (await link.textContent())!;
          expect(await link.getAttribute('href')).toBe(shown);
          const deployment = deployments.find((d: { platform: string }) => d.platform === platform);
          const id = /\/deployments\/([0-9a-f-]{36})\/$/.exec(deployment.url)![1]!;
          expect(shown).toBe(`${base.replace('http:', 'exp:')}/updates/d/${id}`);
          const qr = PNG.sync.read(await card.locator('.qr').screenshot());
          expect(jsQR(new Uint8ClampedArray(qr.data), qr.width, qr.height)?.data, `${platform} QR code`).toBe(shown);
          const answered = await get(shown.replace(/^exp:/, 'http:'), {
            ...EXPO_GO,
            'expo-platform': platform,
            accept: 'application/expo+json',
          });
          expect(answered.status).toBe(200);
          const native = JSON.parse(answered.body.toString());
          expect(native.launchAsset.url).toContain(`/_expo/static/js/${platform}/`);
          if (platform === 'ios') expect(native.id).toBe(manifest.id);
        }
      } finally {
        await context.close();
      }
    }

    // A second deploy is warm, asks nothing, and moves "latest" while the pinned URL stays.
    await toolResult(server.mcpUrl, token, 'svc_send_message', {
      projectId: project.id,
      message: 'deploy again',
      kind: 'deploy',
    });
    const second = await waitIdle(server.mcpUrl, token, project.id, 540_000);
    expect(second.lastWorkflow.status, JSON.stringify(second.lastWorkflow.error)).toBe('completed');
    const moved = JSON.parse(
      (await get(`${base}${latestPath}`, { ...EXPO_GO, accept: 'application/json' })).body.toString(),
    );
    expect(moved.id).not.toBe(manifest.id);
    const pinned = JSON.parse(
      (await get(`${base}/updates/d/${iosId}`, { ...EXPO_GO, accept: 'application/json' })).body.toString(),
    );
    expect(pinned.id).toBe(manifest.id);
  });
});
