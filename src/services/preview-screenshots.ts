/**
 * Screenshots of a project's latest web preview (docs/hosts.md "Screenshots"): what `svc_get_session`
 * returns as an `image/png` item with `screenshot: true`, and the web console shows as the
 * project's thumbnail. One picture per published preview, taken the first time it is asked for
 * and cached beside the preview's folder (a preview never changes once published). A preview whose
 * screenshot failed (the page timed out, the browser wrote nothing) is not tried again for
 * `SCREENSHOT_FAILURE_MEMORY_MS`: its requests answer the failure without starting a browser.
 */
import { rename, readFile, writeFile } from 'node:fs/promises';
import type { Caller } from '../auth/caller.js';
import type { BrowserLocation } from '../builders/browser-location.js';
import type { BuildSandbox } from '../builders/process-sandbox.js';
import { HeavyStepSemaphore } from '../builders/heavy-steps.js';
import {
  SCREENSHOT_TIMEOUT_MS,
  SCREENSHOT_VIEWPORT,
  ScreenshotFailure,
  takePreviewScreenshot,
} from '../builders/preview-screenshot.js';
import type { Logger } from '../logger.js';
import type { ArtifactRepo } from '../store/repos.js';
import type { ArtifactRow } from '../store/rows.js';
import { artifactPath, type ArtifactStore } from '../workflows/artifact-store.js';
import type { ProjectAccess } from './project-access.js';
import type { PublicUrl } from './public-url.js';

/** Browsers that render previews at once, server-wide (each is a headless Chromium: ~100 MB and a core while it renders). */
export const SCREENSHOTS_RUNNING = 2;
/** Screenshots that may wait for a browser, server-wide; past it a request answers "busy" at once. */
export const SCREENSHOTS_WAITING = 4;
/**
 * Screenshots one user may have running or waiting at once; past it that user's request answers
 * "busy" at once. One: a user never holds more than one of the server's browsers.
 */
export const SCREENSHOTS_PER_USER = 1;
/** How long a preview whose screenshot failed is not tried again, in ms: its requests answer the failure meanwhile. */
const SCREENSHOT_FAILURE_MEMORY_MS = 10 * 60_000;
/** Failed previews remembered at most (the oldest is forgotten first). */
const REMEMBERED_FAILURES = 10_000;

/**
 * Longest time a screenshot request may take, in ms: waiting behind a full queue, then its own
 * run (each run ends within `SCREENSHOT_TIMEOUT_MS`). The tool moves its request's deadline out by it.
 */
export const SCREENSHOT_LONGEST_MS = SCREENSHOT_TIMEOUT_MS * (1 + Math.ceil(SCREENSHOTS_WAITING / SCREENSHOTS_RUNNING));

const NEVER = new AbortController().signal;

/** What a screenshot request gives: `png` when taken, and the `structuredContent.screenshot` shape. */
export interface ScreenshotOutcome {
  info: {
    status: 'taken' | 'unavailable';
    reason?: string;
    /** Set when there is no image only because the browsers were busy: asking again later may give one. */
    busy?: true;
    previewUrl?: string;
    width?: number;
    height?: number;
  };
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
  /** The sandbox the browser runs in, as builds do (default: bubblewrap when it works here, else none). */
  sandbox?: BuildSandbox | undefined;
  logger?: Logger;
}

/** Takes and caches preview screenshots. */
export class PreviewScreenshots {
  /** Screenshots being taken, per artifact id: callers asking at the same time share one browser run. */
  private readonly taking = new Map<string, Promise<Buffer>>();
  /** The browsers allowed to run at once (`SCREENSHOTS_RUNNING`). */
  private readonly browsers = new HeavyStepSemaphore(SCREENSHOTS_RUNNING);
  /** Browser runs started or waiting for a slot (each counted once, however many callers share it). */
  private pending = 0;
  /** Per user id, their screenshot requests that wait on a browser run. */
  private readonly perUser = new Map<string, number>();
  /** Per artifact id, the reason its last screenshot failed and until when (ms) it is not tried again. */
  private readonly failed = new Map<string, { reason: string; until: number }>();

  constructor(private readonly deps: PreviewScreenshotDeps) {}

  /**
   * The screenshot of the project's latest web preview (else its latest web deployment).
   * Never fails for want of a preview or a browser: `info.reason` says why there is no image.
   * @throws ServiceError -32004/-32003 (read access, as `svc_get_session`).
   */
  async latest(caller: Caller, projectId: string): Promise<ScreenshotOutcome> {
    await this.deps.access.readable(caller, projectId);
    const { artifacts } = this.deps;
    const artifact =
      (await artifacts.latest(projectId, 'preview', 'web')) ?? (await artifacts.latest(projectId, 'deployment', 'web'));
    if (!artifact)
      return { info: { status: 'unavailable', reason: 'the project has no web preview yet: build it first' } };
    const previewUrl =
      artifact.externalUrl ?? `${this.deps.publicUrl.artifactBaseOf(artifact)}${artifactPath(artifact)}`;
    const browser = this.deps.browser;
    const cached = await readFile(this.cacheFile(artifact)).catch(() => null);
    if (cached) return taken(cached, previewUrl);
    if (browser.path === null) return { info: { status: 'unavailable', reason: browser.problem, previewUrl } };
    const failure = this.failedBefore(artifact.id);
    if (failure) return { info: { status: 'unavailable', reason: failure, previewUrl } };
    // Bounded: a tenant asking for many projects' screenshots at once starts no more browsers than
    // SCREENSHOTS_RUNNING, and waits in a short queue (server-wide and per user) or is told to ask again.
    const mine = this.perUser.get(caller.userId) ?? 0;
    const shared = this.taking.has(artifact.id);
    if (mine >= SCREENSHOTS_PER_USER || (!shared && this.pending >= SCREENSHOTS_RUNNING + SCREENSHOTS_WAITING)) {
      return {
        info: {
          status: 'unavailable',
          reason: 'the server is busy taking other screenshots: ask again in a few seconds',
          busy: true,
          previewUrl,
        },
      };
    }
    this.perUser.set(caller.userId, mine + 1);
    try {
      return taken(await this.take(artifact, browser.path), previewUrl);
    } catch (error) {
      if (!(error instanceof ScreenshotFailure))
        this.deps.logger?.error({ err: error, artifactId: artifact.id }, 'preview screenshot failed');
      const reason = error instanceof ScreenshotFailure ? error.message : 'the screenshot failed';
      this.remember(artifact.id, reason);
      return { info: { status: 'unavailable', reason, previewUrl } };
    } finally {
      const left = (this.perUser.get(caller.userId) ?? 1) - 1;
      if (left <= 0) this.perUser.delete(caller.userId);
      else this.perUser.set(caller.userId, left);
    }
  }

  /** The answer for a preview whose screenshot failed within `SCREENSHOT_FAILURE_MEMORY_MS`, else undefined. */
  private failedBefore(artifactId: string): string | undefined {
    const failure = this.failed.get(artifactId);
    if (!failure) return undefined;
    if (failure.until <= Date.now()) {
      this.failed.delete(artifactId);
      return undefined;
    }
    const minutes = Math.ceil((failure.until - Date.now()) / 60_000);
    return `${failure.reason} (the last attempt failed; it is tried again in ${minutes} min)`;
  }

  /** Remembers that `artifactId`'s screenshot failed (a shared run's failure is remembered once). */
  private remember(artifactId: string, reason: string): void {
    if (this.failed.has(artifactId)) return;
    if (this.failed.size >= REMEMBERED_FAILURES) this.failed.delete(this.failed.keys().next().value!);
    this.failed.set(artifactId, { reason, until: Date.now() + SCREENSHOT_FAILURE_MEMORY_MS });
  }

  private cacheFile(artifact: ArtifactRow): string {
    return this.deps.artifactStore.screenshotFileOf(artifact.id);
  }

  private take(artifact: ArtifactRow, browserPath: string): Promise<Buffer> {
    let running = this.taking.get(artifact.id);
    if (!running) {
      this.pending++;
      running = this.browsers
        .run(NEVER, async () => {
          const png = await takePreviewScreenshot(
            browserPath,
            await this.deps.artifactStore.localDir(artifact.id),
            this.deps.sandbox,
          );
          // Written whole, then renamed: a reader never sees half a picture.
          const file = this.cacheFile(artifact);
          await writeFile(`${file}.tmp`, png);
          await rename(`${file}.tmp`, file);
          return png;
        })
        .finally(() => {
          this.pending--;
          this.taking.delete(artifact.id);
        });
      this.taking.set(artifact.id, running);
    }
    return running;
  }
}

function taken(png: Buffer, previewUrl: string): ScreenshotOutcome {
  return { info: { status: 'taken', previewUrl, ...SCREENSHOT_VIEWPORT }, png };
}
