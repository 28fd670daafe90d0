/**
 * Renders a published web preview to a PNG with headless Chromium, in a phone-sized viewport.
 *
 * The preview is a tenant's code, so the browser runs like a build step: through `startProcess`
 * (its own process group, killed as a whole on timeout), with a fresh profile in a temporary
 * folder. The spawned process is a small node script of ours that serves the preview's folder on
 * 127.0.0.1 (a port of its own choosing) and runs Chromium's own `--screenshot` against it, then
 * exits with Chromium's status. Serving the folder over HTTP, rather than opening `file://`, makes
 * an Expo web export work as it does when served (its `/_expo/static/...` paths are absolute), and
 * the page's only origin is that loopback server.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { realpathSync } from 'node:fs';
import { startProcess } from './process-runner.js';
import type { BuildSandbox } from './process-sandbox.js';

/** The phone-sized viewport of the screenshot, in CSS pixels (an iPhone 14/15 screen). */
export const SCREENSHOT_VIEWPORT = { width: 390, height: 844 } as const;

/** Longest time one screenshot may take, browser start included (ms). */
export const SCREENSHOT_TIMEOUT_MS = 30_000;
/** Time the page's scripts get to render before the picture is taken (Chromium's virtual time, ms). */
const RENDER_BUDGET_MS = 5_000;

/**
 * The node script the process runs: `node -e SCRIPT <previewDir> <browser> <outFile> <profileDir>
 * <width> <height> <budgetMs>`. It serves `previewDir` (paths that name no file get `index.html`,
 * as a single-page app expects), starts the browser against it, and exits with the browser's code.
 */
const SERVE_AND_SHOOT = String.raw`
const http = require('node:http'), fs = require('node:fs'), path = require('node:path'), { spawn } = require('node:child_process');
const [root, browser, out, profile, width, height, budget] = process.argv.slice(1);
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.svg': 'image/svg+xml', '.webp': 'image/webp', '.ico': 'image/x-icon', '.ttf': 'font/ttf', '.woff': 'font/woff', '.woff2': 'font/woff2', '.wasm': 'application/wasm' };
const base = fs.realpathSync(root);
const server = http.createServer((req, res) => {
  let file;
  try {
    file = path.join(base, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    file = fs.realpathSync(file);
    if (!file.startsWith(base + path.sep) && file !== base) throw new Error('outside');
    if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.accessSync(file);
  } catch { file = path.join(base, 'index.html'); }
  fs.readFile(file, (error, data) => {
    if (error) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(file).toLowerCase()] || 'application/octet-stream' });
    res.end(data);
  });
});
server.listen(0, '127.0.0.1', () => {
  const url = 'http://127.0.0.1:' + server.address().port + '/';
  // No network but this server: every other request goes to a proxy that is not there (loopback
  // included: <-loopback> drops Chromium's implicit bypass), and WebRTC sends nothing outside it.
  const offline = ['--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>;' + url.slice(7, -1), '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'];
  const child = spawn(browser, [...offline, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions', '--no-first-run', '--no-default-browser-check', '--hide-scrollbars', '--mute-audio', '--user-data-dir=' + profile, '--window-size=' + width + ',' + height, '--virtual-time-budget=' + budget, '--screenshot=' + out, url], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (d) => process.stderr.write(d));
  child.on('error', (e) => { process.stderr.write(String(e) + '\n'); process.exit(2); });
  child.on('exit', (code) => { server.close(); process.exit(code === null ? 3 : code); });
});
`;

/** Why a screenshot could not be taken (the message is for the caller; no path of the data dir). */
export class ScreenshotFailure extends Error {}

/**
 * Takes one screenshot of the static site in `previewDir` with the browser at `browserPath`.
 *
 * It runs in the build sandbox when this machine has one (docs/security.md "The build sandbox"): read only,
 * the preview folder and the browser's own files (and node's); read and write, the temporary
 * folder it makes for the browser's profile and the image; no network but the sandbox's own
 * loopback interface (the script serves the preview on 127.0.0.1 and the browser loads it there).
 *
 * @param sandbox the sandbox to run in (default: bubblewrap when it works here, else none).
 * @returns the PNG's bytes, `SCREENSHOT_VIEWPORT` CSS pixels at device scale 1.
 * @throws ScreenshotFailure when the browser fails, writes no image, or takes longer than 30 s.
 */
export async function takePreviewScreenshot(
  browserPath: string,
  previewDir: string,
  sandbox?: BuildSandbox,
): Promise<Buffer> {
  const work = await mkdtemp(join(tmpdir(), 'mbm-shot-'));
  try {
    const out = join(work, 'shot.png');
    const tail: string[] = [];
    const run = startProcess({
      file: process.execPath,
      args: [
        '-e',
        SERVE_AND_SHOOT,
        previewDir,
        browserPath,
        out,
        join(work, 'profile'),
        String(SCREENSHOT_VIEWPORT.width),
        String(SCREENSHOT_VIEWPORT.height),
        String(RENDER_BUDGET_MS),
      ],
      cwd: work,
      // No variable of the server (tokens, data dir) reaches the page's browser.
      env: { HOME: work, TMPDIR: work, LANG: 'C.UTF-8' },
      // In the build sandbox when this machine has one: the preview and the browser read-only, the
      // profile and image folder read-write, no network but the sandbox's own loopback.
      binds: { ro: [previewDir, ...browserFolder(browserPath)], rw: [work] },
      network: false,
      ...(sandbox && { sandbox }),
      timeoutMs: SCREENSHOT_TIMEOUT_MS,
      killGraceMs: 1000,
      onStderrLine: (line) => {
        if (tail.length >= 5) tail.shift();
        tail.push(line.text);
      },
    });
    const result = await run.result.catch((error: unknown) => {
      throw new ScreenshotFailure(`the browser could not be started (${(error as Error).message})`);
    });
    if (result.stopCause === 'timeout')
      throw new ScreenshotFailure(`the page took longer than ${SCREENSHOT_TIMEOUT_MS / 1000} s to render`);
    const png = await readFile(out).catch(() => null);
    if (result.code !== 0 || !png || png.length === 0) {
      throw new ScreenshotFailure(`the browser wrote no image (exit ${result.code ?? result.signal})`);
    }
    return png;
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The folder of the browser's real executable, to show inside the sandbox, unless it is under
 * `/usr` (always shown, read-only): a Chrome in `/opt/google/chrome` or a home folder.
 */
function browserFolder(browserPath: string): string[] {
  try {
    const folder = dirname(realpathSync(browserPath));
    return folder === '/usr' || folder.startsWith('/usr/') ? [] : [folder];
  } catch {
    return [];
  }
}
