/**
 * The `expo` builder's toolchain: one installed Expo app template per SDK under
 * `<dataDir>/toolchains/expo-sdk-<sdk>/`, installed with `npm install` from the lockfile that
 * ships in this package (`toolchains/expo-sdk-<sdk>/`), so every server installs the same
 * versions. Not `npm ci`: the lockfile names other platforms' optional packages (macOS and Windows
 * builds of native tools) that a registry mirror may not carry, and `npm ci` refuses a lockfile
 * without their entries; `npm install` keeps every locked version and skips them.
 * Project workspaces share its `node_modules` through a symlink.
 *
 * Installing is atomic: npm runs in a temporary folder that is renamed into place only when
 * it succeeded, so a half-installed toolchain is never used. Two processes installing at once
 * both work; the second rename loses and its copy is removed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuildFailure } from '../builder.js';
import { npmCacheDir, type BuildSandbox } from '../process-sandbox.js';
import { runProcess } from './run-process.js';

/** The Expo SDKs whose lockfile ships in this package (`toolchains/expo-sdk-<sdk>/`). */
export const SUPPORTED_EXPO_SDKS = [58, 54] as const;
/**
 * The SDKs a server serves when none are configured (`--expo-sdks`): the newest first (what
 * Expo Go from Google Play runs; the web preview and the type check use it), then 54 (the last
 * SDK of Expo Go in Apple's App Store). docs/builders.md "Phones".
 */
export const DEFAULT_EXPO_SDKS: readonly number[] = [58, 54];
/**
 * The newest Expo SDK this release knows of (stable on the npm registry when it was made).
 * Updated with every SDK; a test fails when the default toolchain falls more than one major behind.
 */
export const NEWEST_KNOWN_EXPO_SDK = 58;

/** Folder of the shipped lockfiles and app templates (`<package>/toolchains/`). */
const SHIPPED_TOOLCHAINS_DIR = fileURLToPath(new URL('../../../toolchains/', import.meta.url));

/** Environment every Expo command runs with: no telemetry, no interactive prompts. */
const EXPO_ENV = { EXPO_NO_TELEMETRY: '1', CI: '1' } as const;

/**
 * Environment of a build's type checks and exports: `EXPO_ENV`, production, and images (the web favicon)
 * resized by the toolchain's own jimp, never by a `sharp-cli` found on the machine: the search for
 * one (`sharp --version`, `npm config -g get prefix`, yarn, pnpm, bun) took about 150 ms of every
 * web export (docs/performance.md "Goal 3.5: the `expo` builder against a bare `npx expo export`").
 */
export const BUILD_ENV = { ...EXPO_ENV, NODE_ENV: 'production', EXPO_IMAGE_UTILS_NO_SHARP: '1' } as const;

const MARKER = '.svc-toolchain.json';

/** Options of a toolchain install. */
export interface ToolchainInstallOptions {
  /** Called with progress lines meant for people ("installing…", "still installing (40 s)"). */
  onProgress?: (text: string) => void;
  signal?: AbortSignal;
  /** Whole-install limit in ms (default 15 min); then `toolchain_install_failed`. */
  timeoutMs?: number;
  /** Extra environment for npm (tests point `npm_config_registry` somewhere). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where npm runs (default: bubblewrap when it works here). */
  sandbox?: BuildSandbox;
  /** Called with npm's process group id when it starts and ends. */
  onGroupStarted?: (pgid: number) => void;
  onGroupEnded?: (pgid: number) => void;
}

/** One Expo SDK's toolchain under the data dir. */
export class ExpoToolchain {
  /** `<toolchainsDir>/expo-sdk-<sdk>` */
  readonly dir: string;
  /** The shipped lockfile folder (`<package>/toolchains/expo-sdk-<sdk>`). */
  readonly shippedDir: string;
  private installing: Promise<void> | null = null;

  /**
   * @param toolchainsDir where toolchains are installed (`<dataDir>/toolchains`).
   * @throws Error when no lockfile for `sdk` ships in this package.
   */
  constructor(
    toolchainsDir: string,
    readonly sdk: number = DEFAULT_EXPO_SDKS[0]!,
  ) {
    this.shippedDir = join(SHIPPED_TOOLCHAINS_DIR, `expo-sdk-${sdk}`);
    if (!existsSync(join(this.shippedDir, 'package-lock.json'))) {
      throw new Error(
        `Expo SDK ${sdk} is not supported by this version of mobile-builder-mcp (supported: ${SUPPORTED_EXPO_SDKS.join(', ')})`,
      );
    }
    this.dir = join(toolchainsDir, `expo-sdk-${sdk}`);
  }

  /** The app template copied into every new workspace (one for every SDK: `toolchains/template`). */
  get templateDir(): string {
    return join(SHIPPED_TOOLCHAINS_DIR, 'template');
  }

  /** The shipped `package.json` of this SDK's app (the workspace's own `package.json`). */
  get packageJsonFile(): string {
    return join(this.shippedDir, 'package.json');
  }

  /** The React Native version this SDK's lockfile pins (`0.88.1`), for code questions. */
  get reactNativeVersion(): string {
    const lock = JSON.parse(readFileSync(join(this.shippedDir, 'package-lock.json'), 'utf8')) as {
      packages?: Record<string, { version?: string }>;
    };
    return lock.packages?.['node_modules/react-native']?.version ?? 'unknown';
  }

  /** `<toolchain>/node_modules`, the target of every workspace's `node_modules` symlink. */
  get nodeModules(): string {
    return join(this.dir, 'node_modules');
  }

  /** Path of a package's file inside the toolchain (`expo/bin/cli`). */
  bin(relativePath: string): string {
    return join(this.nodeModules, relativePath);
  }

  /** True when this exact lockfile is installed. */
  isInstalled(): boolean {
    try {
      const marker = JSON.parse(readFileSync(join(this.dir, MARKER), 'utf8')) as { lockSha256?: string };
      return marker.lockSha256 === this.lockHash() && existsSync(this.bin('expo/bin/cli'));
    } catch {
      return false;
    }
  }

  /**
   * Installs the toolchain unless it is installed already; concurrent calls share one install.
   * @throws BuildFailure `toolchain_install_failed` (registry unreachable, npm failed, timeout);
   *   the abort reason when `signal` aborts.
   */
  async ensure(options: ToolchainInstallOptions = {}): Promise<void> {
    // A shared install stopped by another caller's cancel is started again for this one.
    for (let attempt = 1; ; attempt++) {
      if (this.isInstalled()) return;
      if (options.signal?.aborted) throw options.signal.reason;
      if (this.installing)
        options.onProgress?.(`Waiting for the Expo SDK ${this.sdk} toolchain install that another build started…`);
      this.installing ??= this.install(options).finally(() => {
        this.installing = null;
      });
      try {
        await this.installing;
        return;
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (error instanceof BuildFailure || attempt >= 3) throw error;
      }
    }
  }

  private lockHash(): string {
    return createHash('sha256')
      .update(readFileSync(join(this.shippedDir, 'package-lock.json')))
      .digest('hex');
  }

  private async install(options: ToolchainInstallOptions): Promise<void> {
    const say = options.onProgress ?? (() => undefined);
    const root = join(this.dir, '..');
    await mkdir(root, { recursive: true });
    const tmp = join(root, `.tmp-expo-sdk-${this.sdk}-${randomUUID()}`);
    await mkdir(tmp);
    const started = Date.now();
    say(`Installing the Expo SDK ${this.sdk} toolchain (once per server, about 1-2 min)…`);
    const ticker = setInterval(
      () =>
        say(`Still installing the Expo SDK ${this.sdk} toolchain (${Math.round((Date.now() - started) / 1000)} s)…`),
      20_000,
    );
    ticker.unref();
    try {
      await copyFile(join(this.shippedDir, 'package.json'), join(tmp, 'package.json'));
      await copyFile(join(this.shippedDir, 'package-lock.json'), join(tmp, 'package-lock.json'));
      const timeoutMs = options.timeoutMs ?? 15 * 60_000;
      const result = await runProcess({
        command: 'npm',
        args: ['install', '--no-audit', '--no-fund', '--no-save'],
        cwd: tmp,
        // npm sees the install folder, its own cache and the network, and none of the server's
        // environment but its proxy and npm settings.
        inheritEnv: INSTALL_ENV.flatMap((name) => [name, name.toLowerCase()]),
        binds: { rw: [tmp, ...npmCache()] },
        network: true,
        ...(options.sandbox && { sandbox: options.sandbox }),
        env: {
          ...npmConfigOfServer(),
          ...EXPO_ENV,
          // A registry that cannot be reached fails in about a minute instead of npm's 5-minute default per request.
          npm_config_fetch_retries: '1',
          npm_config_fetch_retry_mintimeout: '2000',
          npm_config_fetch_retry_maxtimeout: '10000',
          npm_config_fetch_timeout: '60000',
          npm_config_update_notifier: 'false',
          ...options.env,
        },
        ...(options.signal && { signal: options.signal }),
        timeoutMs,
        tailLines: 40,
        ...(options.onGroupStarted && { onGroupStarted: options.onGroupStarted }),
        ...(options.onGroupEnded && { onGroupEnded: options.onGroupEnded }),
      });
      if (result.aborted) throw new Error('The toolchain install was stopped');
      if (result.timedOut) {
        throw new BuildFailure(
          'toolchain_install_failed',
          `Installing the Expo SDK ${this.sdk} toolchain took longer than ${Math.round(timeoutMs / 60_000)} min and was stopped. Check that the npm registry is reachable from this machine (npm config get registry; proxy settings), then run \`mobile-builder-mcp toolchain install --sdk ${this.sdk}\`.`,
        );
      }
      if (result.code !== 0) throw installFailure(this.sdk, result.tail);
      await writeFile(
        join(tmp, MARKER),
        `${JSON.stringify({ sdk: this.sdk, lockSha256: this.lockHash(), installedAt: new Date().toISOString() })}\n`,
      );
      // Replace an older install (another lockfile) only now that the new one works.
      if (existsSync(this.dir)) {
        const old = join(root, `.old-expo-sdk-${this.sdk}-${randomUUID()}`);
        await rename(this.dir, old).catch(() => undefined);
        void rm(old, { recursive: true, force: true });
      }
      try {
        await rename(tmp, this.dir);
      } catch (error) {
        // Another process finished first: use its install.
        if (!this.isInstalled()) throw error;
      }
      say(`Expo SDK ${this.sdk} toolchain installed in ${Math.round((Date.now() - started) / 1000)} s.`);
    } finally {
      clearInterval(ticker);
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

/** Proxy and certificate settings an install inherits (upper and lower case). */
const INSTALL_ENV = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS'];

/** The server's `npm_config_*` variables (registry, proxy, cache): what the operator set for npm. */
function npmConfigOfServer(): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_config_/i.test(name) && value !== undefined && !/_(auth|authtoken|_auth|password|token)$/i.test(name))
      found[name] = value;
  }
  return found;
}

/** The npm cache folder, when it exists (shared with the operator's npm: downloads are reused). */
function npmCache(): string[] {
  const dir = npmCacheDir();
  return existsSync(dir) ? [dir] : [];
}

const NETWORK_ERRORS =
  /\b(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|network|request to \S+ failed)\b/i;

function installFailure(sdk: number, tail: string[]): BuildFailure {
  const errors = tail.filter((line) => /npm (error|ERR!)/.test(line)).slice(0, 8);
  const detail = (errors.length ? errors : tail.slice(-8)).join('\n');
  const retry = `run \`mobile-builder-mcp toolchain install --sdk ${sdk}\` (or build again)`;
  if (NETWORK_ERRORS.test(tail.join('\n'))) {
    return new BuildFailure(
      'toolchain_install_failed',
      `Could not install the Expo SDK ${sdk} toolchain: the npm registry could not be reached from this machine. Check the network, proxy and registry settings (npm config get registry), then ${retry}.\n${detail}`,
    );
  }
  return new BuildFailure(
    'toolchain_install_failed',
    `Could not install the Expo SDK ${sdk} toolchain (npm install failed). Fix the cause below, then ${retry}.\n${detail}`,
  );
}
