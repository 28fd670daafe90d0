/**
 * Screenshots of a project's latest web preview (README "Screenshots"): what `svc_get_session`
 * returns as an `image/png` item with `screenshot: true`, and the web console shows as the
 * project's thumbnail. One picture per published preview, taken the first time it is asked for
 * and cached beside the preview's folder (a preview never changes once published).
 */
import { rename, readFile, writeFile } from 'node:fs/promises';
import type { Caller } from '../auth/caller.js';
import type { BrowserLocation } from '../builders/browser-location.js';
import { SCREENSHOT_TIMEOUT_MS, SCREENSHOT_VIEWPORT, ScreenshotFailure, takePreviewScreenshot } from '../builders/preview-screenshot.js';
import type { Logger } from '../logger.js';
import type { ArtifactRepo } from '../store/artifact-repo.js';
import type { ArtifactRow } from '../store/schema.js';
import { artifactPath, type ArtifactStore } from '../workflows/artifact-store.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';

/**
 * Browsers taking screenshots at once, server-wide, and per user who asks (each is a Chromium of
 * 100-300 MB for up to 30 s). A request past either bound gets no image (`info.reason` says so)
 * rather than a wait; one for a preview already being taken shares that run.
 */
const MAX_SCREENSHOTS_AT_ONCE = 2;
const MAX_SCREENSHOTS_PER_USER = 1;

/** Longest time `latest` may take (ms): one browser run's bound. A caller's deadline must allow it. */
export const SCREENSHOT_BOUND_MS = SCREENSHOT_TIMEOUT_MS;

/** What a screenshot request gives: `png` when taken, and the `structuredContent.screenshot` shape. */
export interface ScreenshotOutcome {
  info: { status: 'taken' | 'unavailable'; reason?: string; previewUrl?: string; width?: number; height?: number };
  /** The PNG's bytes, `info.width` x `info.height` CSS pixels. */
  png?: Buffer;
}

/** What the screenshot service needs. */
export interface PreviewScreenshotDeps {
  access: ProjectAccess;
  artifacts: ArtifactRepo;
  artifactStore: ArtifactStore;
  publicUrl: PublicUrl;
  browser: BrowserLocation;
  logger?: Logger;
}

/** Takes and caches preview screenshots. */
export class PreviewScreenshots {
  /** Screenshots being taken, per artifact id: callers asking at the same time share one browser run. */
  private readonly taking = new Map<string, Promise<Buffer>>();
  /** Browser runs under way per user who asked (their sum is `taking.size`). */
  private readonly takingBy = new Map<string, number>();

  constructor(private readonly deps: PreviewScreenshotDeps) {}

  /**
   * The screenshot of the project's latest web preview (else its latest web deployment).
   * Never fails for want of a preview or a browser: `info.reason` says why there is no image
   * (also when the bounds on browsers at once, `MAX_SCREENSHOTS_AT_ONCE`, are reached).
   * @throws ServiceError -32004/-32003 (read access, as `svc_get_session`).
   */
  async latest(caller: Caller, projectId: string): Promise<ScreenshotOutcome> {
    this.deps.access.readable(caller, projectId);
    const { artifacts } = this.deps;
    const artifact = artifacts.latest(projectId, 'preview', 'web') ?? artifacts.latest(projectId, 'deployment', 'web');
    if (!artifact) return { info: { status: 'unavailable', reason: 'the project has no web preview yet: build it first' } };
    const previewUrl = artifact.externalUrl ?? `${this.deps.publicUrl.artifactBaseOf(artifact)}${artifactPath(artifact)}`;
    const browser = this.deps.browser;
    const cached = await readFile(this.cacheFile(artifact)).catch(() => null);
    if (cached) return taken(cached, previewUrl);
    if (browser.path === null) return { info: { status: 'unavailable', reason: browser.problem, previewUrl } };
    try {
      return taken(await this.take(artifact, browser.path, caller.userId), previewUrl);
    } catch (error) {
      if (!(error instanceof ScreenshotFailure)) this.deps.logger?.error({ err: error, artifactId: artifact.id }, 'preview screenshot failed');
      const reason = error instanceof ScreenshotFailure ? error.message : 'the screenshot failed';
      return { info: { status: 'unavailable', reason, previewUrl } };
    }
  }

  private cacheFile(artifact: ArtifactRow): string {
    return this.deps.artifactStore.screenshotFileOf(artifact.id);
  }

  private take(artifact: ArtifactRow, browserPath: string, userId: string): Promise<Buffer> {
    let running = this.taking.get(artifact.id);
    if (!running) {
      const mine = this.takingBy.get(userId) ?? 0;
      if (this.taking.size >= MAX_SCREENSHOTS_AT_ONCE || mine >= MAX_SCREENSHOTS_PER_USER) {
        throw new ScreenshotFailure('the server is taking other screenshots now: ask again in a few seconds');
      }
      this.takingBy.set(userId, mine + 1);
      running = (async () => {
        const png = await takePreviewScreenshot(browserPath, this.deps.artifactStore.dirOf(artifact.id));
        // Written whole, then renamed: a reader never sees half a picture.
        const file = this.cacheFile(artifact);
        await writeFile(`${file}.tmp`, png);
        await rename(`${file}.tmp`, file);
        return png;
      })().finally(() => {
        this.taking.delete(artifact.id);
        const left = (this.takingBy.get(userId) ?? 1) - 1;
        if (left <= 0) this.takingBy.delete(userId);
        else this.takingBy.set(userId, left);
      });
      this.taking.set(artifact.id, running);
    }
    return running;
  }
}

function taken(png: Buffer, previewUrl: string): ScreenshotOutcome {
  return { info: { status: 'taken', previewUrl, ...SCREENSHOT_VIEWPORT }, png };
}
