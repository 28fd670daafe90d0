/**
 * The `expo` builder: every build is a real Expo (React Native) app, every deploy a real Expo
 * update (docs/performance.md "The expo builder").
 *
 * - build: workspace (toolchain installed on first use, template copied, `app.json` synced) ->
 *   agent step (deterministic edits or the operator's code agent) -> `tsc --noEmit` beside
 *   `expo export --platform web` -> web preview. Success commits; failure or cancel resets.
 * - deploy: builds first when there is no good build -> app identifier (asked once per
 *   project) -> `expo export --platform ios --platform android` (Hermes bytecode) once per served
 *   SDK (the first in the workspace, the others in a copy linked to their own toolchain) and a
 *   web export -> immutable, numbered deployments `web`, `ios`, `android`; the native ones hold
 *   one Expo update per SDK and are served as Expo Updates (protocol v1) by the server. An SDK
 *   whose export fails is left out and named in the result; when every SDK fails, the deploy fails.
 * Type check and exports run in the server-wide heavy-step slots, shared fairly between users,
 * each bounded in time and memory (`step-bounds.ts`).
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BuildFailure,
  reportInBackground,
  type Builder,
  type BuildContext,
  type BuildJob,
  type PublishedArtifact,
} from '../builder.js';
import { packCheckpoint, publishCheckpoint, RESTORE_STEP } from './checkpoint.js';
import { BesideExport } from './beside-export.js';
import { OutputBatcher } from '../output-batcher.js';
import { appIdentifier } from '../app-identifier.js';
import type { AgentStep } from './agent-step.js';
import { HeavyStepSemaphore } from '../heavy-steps.js';
import { pruneMetroCache, PRUNE_EVERY_MS } from './metro-cache.js';
import { pathRedactor } from '../output-redaction.js';
import type { BuildSandbox, SandboxBinds } from '../process-sandbox.js';
import { expoPublicOf, groupHooks, pushLine, runProcess } from './run-process.js';
import { BUILD_ENV, ExpoToolchain } from './toolchain.js';
import { boundPassed, EXPORT_BOUNDS, heapFlag, TYPE_CHECK_BOUNDS, withTimeout } from './step-bounds.js';
import { prepareDeploymentFolder, type FailedSdk, type SdkExport } from './update-bundle.js';
import { DEFAULT_CHANNEL, latestUpdatePathOf } from '../../core/releases.js';
import { ExpoWorkspace, OUTPUT_DIR } from './workspace.js';
import { TypeCheckRecords } from './type-check-record.js';

/** Refusals of a checkpoint that leave the workflow completed (docs/builders.md "Checkpoints"). */
const CHECKPOINT_REFUSALS = new Set(['secret_in_artifact', 'artifact_quota_exceeded']);

/** Settings of the `expo` builder. */
export interface ExpoBuilderOptions {
  /** Metro's transform cache, shared by every project (in the data dir, not /tmp). */
  metroCacheDir: string;
  /** The served SDKs' toolchains, the first the workspace's (previews, type checks, new apps). */
  toolchains: readonly [ExpoToolchain, ...ExpoToolchain[]];
  agent: AgentStep;
  heavy: HeavyStepSemaphore;
  /** Install the toolchain on first use (default true); false fails with `toolchain_missing`. */
  installToolchain?: boolean;
  /** Wall-clock limit of one type check or export, in ms (default: `TYPE_CHECK_BOUNDS`, `EXPORT_BOUNDS`). */
  stepTimeoutMs?: number;
  /** Output lines posted per workflow (default 400). */
  maxOutputLines?: number;
  /** Extra environment for npm during a toolchain install. */
  toolchainEnv?: Readonly<Record<string, string | undefined>>;
  /** Where every child runs (default: bubblewrap when it works here). */
  sandbox?: BuildSandbox;
}

/** The `expo` builder (see the file comment). */
export class ExpoBuilder implements Builder {
  readonly name = 'expo';
  /** Every completed workflow publishes a checkpoint, and a restore makes the app one again. */
  readonly restores = true;
  /** When this server last pruned the Metro cache (ms since the epoch). */
  private lastCachePrune = 0;
  /** The workspaces' last passing type checks, verifiable by this process only. */
  private readonly records = new TypeCheckRecords();

  constructor(private readonly options: ExpoBuilderOptions) {}

  /** The toolchain of the workspace: the first served SDK. */
  private get toolchain(): ExpoToolchain {
    return this.options.toolchains[0];
  }

  /** "58 and 54" */
  private get sdkList(): string {
    return this.options.toolchains.map((t) => t.sdk).join(' and ');
  }

  async run(job: BuildJob, context: BuildContext): Promise<void> {
    const workspace = new ExpoWorkspace(job.workspaceDir, this.toolchain, this.options.sandbox);
    const redact = pathRedactor(job.workspaceDir);
    const output = new OutputBatcher((text) => reportInBackground(context.say(redact(text))), {
      maxLines: this.options.maxOutputLines ?? 400,
    });
    try {
      const built = job.kind === 'build' ? await this.build(job, context, workspace, output, 0, 5) : null;
      if (job.kind !== 'build') await this.deploy(job, context, workspace, output);
      const checkpoint =
        built?.checkpoint ??
        packCheckpoint(workspace, this.toolchain, job.project.name).then((sourceDir) =>
          context.publish({ kind: 'export', platform: 'web', sourceDir }),
        );
      await publishCheckpoint(job, context, checkpoint).catch((error: unknown) => {
        // What the workflow published stays published: a checkpoint refused (a secret in the
        // source, the owner's storage full) is said, and the workflow still completes.
        if (!(error instanceof BuildFailure) || !CHECKPOINT_REFUSALS.has(error.code)) throw error;
        return context.say(`No checkpoint saved for this workflow: ${error.message}`);
      });
    } catch (error) {
      output.flush();
      // A broken edit never poisons the next build: back to the last good commit.
      await workspace.reset().catch(() => undefined);
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
        throw new BuildFailure(
          'disk_full',
          'The disk of the server is full; the workspace was reset. Free some space (old artifacts, the Metro cache under the data dir) and build again.',
        );
      }
      throw error;
    } finally {
      output.flush();
    }
  }

  /**
   * Installs every served SDK's toolchain that is missing (the code check reads every SDK's
   * packages), then makes the workspace ready at its last good commit.
   */
  private async prepare(job: BuildJob, context: BuildContext, workspace: ExpoWorkspace): Promise<void> {
    const { toolchain } = this;
    for (const served of this.options.toolchains) {
      if (served.isInstalled()) continue;
      if (this.options.installToolchain === false) {
        throw new BuildFailure(
          'toolchain_missing',
          `The Expo SDK ${served.sdk} toolchain is not installed on this server. Run \`mobile-builder-mcp toolchain install --sdk ${served.sdk}\`.`,
        );
      }
      await served.ensure({
        onProgress: (text) => reportInBackground(context.say(text)),
        signal: job.signal,
        ...groupHooks(context),
        ...(this.options.toolchainEnv && { env: this.options.toolchainEnv }),
        ...(this.options.sandbox && { sandbox: this.options.sandbox }),
      });
    }
    if (job.signal.aborted) throw job.signal.reason;
    const { created } = await workspace.ensure({
      name: job.project.name,
      identifier: await context.recall('app_identifier'),
    });
    if (created)
      await context.say(`Created the app's workspace from the Expo SDK ${toolchain.sdk} blank TypeScript template.`);
    // A previous run may have been killed mid-way (server crash): start from the last good commit.
    await workspace.reset();
    await workspace.syncAppConfig({ name: job.project.name, identifier: await context.recall('app_identifier') });
  }

  private async build(
    job: BuildJob,
    context: BuildContext,
    workspace: ExpoWorkspace,
    output: OutputBatcher,
    offset: number,
    total: number,
  ): Promise<{ checkpoint: Promise<PublishedArtifact> | null }> {
    // A restore's files come from its checkpoint instead of an agent (docs/builders.md "Checkpoints").
    const agent = job.restore ? RESTORE_STEP : this.options.agent;
    await context.step(offset + 1, total, `Preparing the workspace (Expo SDK ${this.toolchain.sdk})`);
    await this.prepare(job, context, workspace);

    await context.step(offset + 2, total, agent.stepName);
    const outcome = await agent.run({
      job,
      context,
      workspace,
      sdk: this.toolchain.sdk,
      toolchain: this.toolchain,
      toolchains: this.options.toolchains,
      typeCheck: (dir) => this.checkTypes(job, context, dir, output),
    });
    if (job.signal.aborted) throw job.signal.reason;
    const links = await workspace.linksLeaving();
    if (links.length)
      throw new BuildFailure(
        'agent_failed',
        `The agent step left symbolic links that point outside the workspace (${links.join(', ')}); nothing was built and the workspace was reset.`,
      );
    // The agent may not touch the identity: put it back.
    await workspace.syncAppConfig({ name: job.project.name, identifier: await context.recall('app_identifier') });

    const webDir = join(workspace.dir, OUTPUT_DIR, 'web');
    const firstLine = job.instruction.split('\n')[0]!.slice(0, 72);
    // The commit and a build's checkpoint are prepared beside the export; the commit becomes HEAD
    // once the preview is published (docs/performance.md "Round three").
    const beside = BesideExport.start(
      workspace,
      `${firstLine || 'Build'}\n\n${outcome.summary}\nWorkflow ${job.workflowId}`,
      job.kind === 'build' ? { toolchain: this.toolchain, appName: job.project.name } : null,
    );
    try {
      await this.checkAndExportWeb(job, context, workspace, output, outcome.typeChecked === true, offset + 3, total);
    } finally {
      // No reset of the workspace while its git process runs.
      await beside.settled();
    }

    await context.step(offset + 5, total, 'Publishing the web preview');
    return beside.finish(
      context,
      () => context.publish({ kind: 'preview', platform: 'web', sourceDir: webDir }),
      (preview) =>
        context.say(
          `Web preview of ${job.project.name} published at ${preview.path} (a real Expo web export; open it from previewUrls of svc_get_session).`,
          'result',
        ),
    );
  }

  private async deploy(
    job: BuildJob,
    context: BuildContext,
    workspace: ExpoWorkspace,
    output: OutputBatcher,
  ): Promise<void> {
    const needsBuild = (await context.latestPreview('web')) === null;
    // With no good build yet, the build's own web export is the one deployed.
    const base = needsBuild ? 5 : 1;
    const total = base + (needsBuild ? 3 : 4);
    if (needsBuild) {
      await context.say('This project has no good build yet: building first.');
      await this.build(job, context, workspace, output, 0, total);
    } else {
      await context.step(1, total, `Preparing the workspace (Expo SDK ${this.toolchain.sdk})`);
      await this.prepare(job, context, workspace);
    }
    let step = base;

    await context.step(++step, total, 'Checking the app identifier');
    const appId = await appIdentifier(context);
    await workspace.syncAppConfig({ name: job.project.name, identifier: appId });
    await workspace.commit(`Set the app identifier ${appId}`);

    await context.step(
      ++step,
      total,
      `Exporting native bundles for iOS and Android (Hermes bytecode, Expo SDK ${this.sdkList})`,
    );
    const { exports, failed } = await this.exportNative(job, context, workspace, output);

    const webDir = join(workspace.dir, OUTPUT_DIR, 'web');
    if (!needsBuild) {
      await context.step(++step, total, 'Exporting the web app (expo export --platform web)');
      await this.exportPlatforms(job, context, workspace.dir, this.toolchain, output, ['web'], webDir);
    }

    await context.step(step + 1, total, 'Publishing deployments (web, ios, android)');
    const appConfig = await workspace.appConfig();
    const web = await context.publish({ kind: 'deployment', platform: 'web', sourceDir: webDir });
    const published: string[] = [`web at ${web.path}`];
    for (const platform of ['ios', 'android'] as const) {
      const dir = join(workspace.dir, OUTPUT_DIR, 'updates', platform);
      const updates = await prepareDeploymentFolder(exports, failed, platform, dir, appConfig);
      const deployment = await context.publish({ kind: 'deployment', platform, sourceDir: dir });
      published.push(
        `${platform} (${updates.updates.map((u) => `SDK ${u.sdk}: Expo update ${u.id}`).join(', ')}) at ${deployment.path}`,
      );
    }
    const served = exports.map((e) => e.sdk).join(' and ');
    const latest = latestUpdatePathOf(await context.updateChannelToken(), job.channel ?? DEFAULT_CHANNEL);
    const failures = failed.map((f) => ` Expo SDK ${f.sdk} is not served: its export failed (${f.reason}).`).join('');
    await context.say(
      `Deploy #${web.number}: web, ios, android. Deployed ${job.project.name} as ${appId} for Expo SDK ${served}: ${published.join('; ')}.${failures} ` +
        `The ios and android links open a page with an exp:// QR code: Expo Go gets the update of the SDK it runs (${served}; ` +
        "Google Play's Expo Go runs the newest SDK, the App Store's runs SDK 54), a development build the first." +
        ` The channel's "latest" update URL path (follows every new deploy of channel ${job.channel ?? DEFAULT_CHANNEL}; keep it private): ${latest}`,
      'result',
    );
  }

  /**
   * `expo export --platform ios --platform android` once per served SDK: the first in the
   * workspace, each other in a copy linked to its own toolchain. A failed SDK is reported and
   * left out.
   * @throws BuildFailure of the first SDK when every SDK failed; the abort reason on cancel.
   */
  private async exportNative(
    job: BuildJob,
    context: BuildContext,
    workspace: ExpoWorkspace,
    output: OutputBatcher,
  ): Promise<{ exports: SdkExport[]; failed: FailedSdk[] }> {
    const exports: SdkExport[] = [];
    const failed: FailedSdk[] = [];
    let firstFailure: unknown;
    for (const toolchain of this.options.toolchains) {
      const appDir = toolchain === this.toolchain ? workspace.dir : await workspace.stageFor(toolchain);
      const exportDir = join(workspace.dir, OUTPUT_DIR, `native-${toolchain.sdk}`);
      try {
        await this.exportPlatforms(job, context, appDir, toolchain, output, ['ios', 'android'], exportDir);
        exports.push({ sdk: toolchain.sdk, exportDir });
      } catch (error) {
        if (job.signal.aborted || !(error instanceof BuildFailure)) throw error;
        firstFailure ??= error;
        const reason = error.message.split('\n').slice(0, 3).join(' ').slice(0, 400);
        failed.push({ sdk: toolchain.sdk, reason });
        await context.say(
          `The Expo SDK ${toolchain.sdk} export failed; the deploy goes on without SDK ${toolchain.sdk}: ${reason}`,
        );
      }
    }
    if (exports.length === 0) throw firstFailure;
    return { exports, failed };
  }

  /** The environment of tsc and the exports: only what Expo needs (never the server's own), the heap bound, an export's Metro cache. */
  private childEnv(heap: string, metroCacheDir?: string): Record<string, string> {
    return { ...BUILD_ENV, ...(metroCacheDir && { SVC_METRO_CACHE_DIR: metroCacheDir }), NODE_OPTIONS: heap };
  }

  /**
   * What a type check (workspace read-only) or an export (`metroCache` given: the workspace and its
   * project's Metro cache folder read-write, never another's) sees, beside the toolchain read-only.
   */
  private binds(workspaceDir: string, metroCache?: string, toolchain: ExpoToolchain = this.toolchain): SandboxBinds {
    const ro = [toolchain.dir];
    return metroCache ? { ro, rw: [workspaceDir, metroCache] } : { ro: [...ro, workspaceDir] };
  }

  /** Runs `fn` in a heavy-step slot of its own, or at once when the caller holds one (`inSlot`). */
  private heavy<T>(job: BuildJob, context: BuildContext, inSlot: boolean, fn: () => Promise<T>): Promise<T> {
    if (inSlot) return fn();
    const wait = `Waiting for a heavy-step slot (type checks and exports take turns between users, ${this.options.heavy.slots} at a time on this server)…`;
    return this.options.heavy.runFor(job.project.ownerId, job.signal, fn, () => reportInBackground(context.say(wait)));
  }

  /**
   * Steps `step` (type check; none when the agent's files passed it in staging: `typeChecked`) and
   * `step + 1` (web export into `.svc/web`) of a build, side by side in one heavy-step slot: tsc
   * only reads the sources (docs/performance.md "Round three"). A failed check stops the export.
   * @throws BuildFailure `type_check_failed`, or the export's; the abort reason on cancel.
   */
  private async checkAndExportWeb(
    job: BuildJob,
    context: BuildContext,
    workspace: ExpoWorkspace,
    output: OutputBatcher,
    typeChecked: boolean,
    step: number,
    total: number,
  ): Promise<void> {
    const webDir = join(workspace.dir, OUTPUT_DIR, 'web');
    await context.step(step, total, 'Type checking (tsc --noEmit)');
    if (typeChecked) await context.say('The applied files passed tsc --noEmit in the staging copy.');
    // docs/builders.md "Skipping the type check": nothing the check reads changed in type since it last passed.
    const before = typeChecked ? null : await this.records.fingerprint(workspace.dir, this.toolchain);
    const skipped = await this.records.skipped(workspace.dir, before);
    if (skipped) await context.say(skipped);
    await context.step(step + 1, total, 'Exporting the web app (expo export --platform web)');
    if (typeChecked || skipped)
      return this.exportPlatforms(job, context, workspace.dir, this.toolchain, output, ['web'], webDir);
    const stop = new AbortController();
    await this.heavy(job, context, false, async () => {
      const exported = this.exportPlatforms(job, context, workspace.dir, this.toolchain, output, ['web'], webDir, {
        signal: AbortSignal.any([job.signal, stop.signal]),
        inSlot: true,
      });
      exported.catch(() => undefined); // awaited below, whichever way the type check ends
      let checked: { ok: boolean; diagnostics: string[] } | undefined;
      try {
        checked = await this.checkTypes(job, context, workspace.dir, output, true);
      } finally {
        // A failed (or cancelled) check stops the export and waits for its process group to end.
        if (!checked?.ok) {
          stop.abort();
          await exported.catch(() => undefined);
        }
      }
      if (!checked.ok)
        throw new BuildFailure(
          'type_check_failed',
          `The app does not type-check (tsc --noEmit); the workspace was reset to its last good version:\n${checked.diagnostics.slice(0, 10).join('\n')}`,
        );
      if (before) await this.records.recordPass(workspace.dir, this.toolchain, before);
      await exported;
    });
  }

  /**
   * `tsc --noEmit` in `dir` (fixed argv, no shell), in a heavy-step slot (the caller's: `inSlot`), within `TYPE_CHECK_BOUNDS`.
   * A check stopped at a bound fails (`ok: false`) with the reason as its only diagnostic.
   * @throws the abort reason on cancel.
   */
  private async checkTypes(
    job: BuildJob,
    context: BuildContext,
    dir: string,
    output: OutputBatcher,
    inSlot = false,
  ): Promise<{ ok: boolean; diagnostics: string[] }> {
    const bounds = withTimeout(TYPE_CHECK_BOUNDS, this.options.stepTimeoutMs);
    const diagnostics: string[] = [];
    const result = await this.heavy(job, context, inSlot, () =>
      runProcess({
        command: process.execPath,
        args: [heapFlag(bounds), this.toolchain.bin('typescript/bin/tsc'), '--noEmit', '--pretty', 'false'],
        cwd: dir,
        env: this.childEnv(heapFlag(bounds)),
        binds: this.binds(job.workspaceDir),
        ...(this.options.sandbox && { sandbox: this.options.sandbox }),
        limits: { memoryBytes: bounds.memoryBytes, cpuSeconds: bounds.cpuSeconds },
        signal: job.signal,
        timeoutMs: bounds.timeoutMs,
        onStdout: (line) => {
          if (diagnostics.length < 20) diagnostics.push(line);
          pushLine(output, line);
        },
        onStderr: (line) => pushLine(output, line),
        ...groupHooks(context),
      }),
    );
    output.flush();
    if (result.aborted || job.signal.aborted) throw job.signal.reason;
    const passed = boundPassed(result, bounds, 'tsc --noEmit');
    if (passed) {
      return {
        ok: false,
        diagnostics: [
          `${passed}: the app's types are far heavier than a normal app's (a deep recursive or exponentially large type?); simplify them.`,
        ],
      };
    }
    if (result.code === 0) return { ok: true, diagnostics: [] };
    return { ok: false, diagnostics: diagnostics.length ? diagnostics : result.tail.slice(-10) };
  }

  /**
   * `expo export` of `platforms` for the app in `appDir` (the workspace or a copy inside it) with
   * `toolchain`, into `outDir`, under the heavy-step semaphore (the caller's slot: `inSlot`), until
   * `signal` (default the job's) aborts.
   * @throws BuildFailure `timeout` or `export_failed`; the abort reason on cancel.
   */
  private async exportPlatforms(
    job: BuildJob,
    context: BuildContext,
    appDir: string,
    toolchain: ExpoToolchain,
    output: OutputBatcher,
    platforms: Array<'web' | 'ios' | 'android'>,
    outDir: string,
    { signal = job.signal, inSlot = false }: { signal?: AbortSignal; inSlot?: boolean } = {},
  ): Promise<void> {
    const bounds = withTimeout(EXPORT_BOUNDS, this.options.stepTimeoutMs);
    await rm(outDir, { recursive: true, force: true });
    await mkdir(join(outDir, '..'), { recursive: true });
    const metroCache = join(this.options.metroCacheDir, job.project.id);
    await mkdir(metroCache, { recursive: true });
    const args = [
      toolchain.bin('expo/bin/cli'),
      'export',
      ...platforms.flatMap((p) => ['--platform', p]),
      '--output-dir',
      outDir,
    ];
    const result = await this.heavy(job, context, inSlot, () =>
      runProcess({
        command: process.execPath,
        args,
        cwd: appDir,
        // The project's plain EXPO_PUBLIC_* variables, which Expo inlines into the app; never a secret.
        env: { ...expoPublicOf(job), ...this.childEnv(heapFlag(bounds), metroCache) },
        binds: this.binds(job.workspaceDir, metroCache, toolchain),
        ...(this.options.sandbox && { sandbox: this.options.sandbox }),
        limits: { memoryBytes: bounds.memoryBytes, cpuSeconds: bounds.cpuSeconds },
        signal,
        timeoutMs: bounds.timeoutMs,
        onStdout: (line) => pushLine(output, line),
        onStderr: (line) => pushLine(output, line),
        ...groupHooks(context),
      }),
    );
    output.flush();
    if (result.aborted || signal.aborted) throw signal.reason;
    const passed = boundPassed(result, bounds, `The ${platforms.join('+')} export (Expo SDK ${toolchain.sdk})`);
    if (passed)
      throw new BuildFailure(result.timedOut ? 'timeout' : 'export_failed', `${passed}; the workspace was reset.`);
    if (result.code !== 0) {
      const how = result.code === null ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
      throw new BuildFailure(
        'export_failed',
        `expo export --platform ${platforms.join(' --platform ')} (Expo SDK ${toolchain.sdk}) ${how}:\n${result.tail.slice(-12).join('\n')}`,
      );
    }
    if (Date.now() - this.lastCachePrune >= PRUNE_EVERY_MS) {
      this.lastCachePrune = Date.now();
      // The server's own cache, not the build's work: pruned beside the builds, never waited for.
      pruneMetroCache(this.options.metroCacheDir).catch(() => undefined);
    }
  }
}
