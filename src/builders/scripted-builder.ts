/**
 * The `scripted` builder (docs/builders.md#builders): a deterministic simulation of a building agent, for
 * trying the protocol and for tests. It says so in its messages.
 *
 * - build: four paced steps; writes a real static web preview (`build/web/index.html` in the
 *   workspace) and publishes it.
 * - deploy: builds first when the project has no preview yet; asks once per project for the app
 *   identifier (reverse-DNS, validated); publishes the latest preview as an immutable, numbered
 *   deployment.
 */
import { DEFAULTS } from '../core/defaults.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { abortableDelay, type Builder, type BuildContext, type BuildJob } from './builder.js';
import { appIdentifier } from './app-identifier.js';
import { renderPreviewPage } from './preview-page.js';

const SIMULATION_NOTE =
  'This is the scripted builder: it simulates a building agent. No native binary is compiled and nothing is sent to an app store.';

/** The deterministic simulated builder (docs/builders.md#builders); fails only when aborted. */
export class ScriptedBuilder implements Builder {
  readonly name = 'scripted';

  /** @param stepMs pause per step in milliseconds (`--scripted-step-ms`, default `DEFAULTS.scriptedStepMs`). */
  constructor(private readonly stepMs: number = DEFAULTS.scriptedStepMs) {}

  async run(job: BuildJob, context: BuildContext): Promise<void> {
    if (job.kind === 'build') {
      await context.say(SIMULATION_NOTE);
      await this.build(job, context, 0, 4);
      return;
    }
    await this.deploy(job, context);
  }

  private async build(job: BuildJob, context: BuildContext, offset: number, total: number): Promise<void> {
    await context.step(offset + 1, total, 'Reading the instructions');
    await abortableDelay(this.stepMs, job.signal);
    await context.step(offset + 2, total, 'Generating the app screens');
    await abortableDelay(this.stepMs, job.signal);
    const outDir = join(job.workspaceDir, 'build', 'web');
    await mkdir(outDir, { recursive: true });
    const html = renderPreviewPage({
      projectName: job.project.name,
      description: job.project.description,
      instructions: [...job.history, job.instruction],
      builtAt: new Date().toISOString(),
      workflowId: job.workflowId,
    });
    await writeFile(join(outDir, 'index.html'), html, 'utf8');
    await context.step(offset + 3, total, 'Bundling the web preview');
    await abortableDelay(this.stepMs, job.signal);
    await context.step(offset + 4, total, 'Publishing the preview');
    const preview = await context.publish({ kind: 'preview', platform: 'web', sourceDir: outDir });
    await context.say(
      `Web preview published at ${preview.path} (open it from previewUrls of svc_get_session).`,
      'result',
    );
  }

  private async deploy(job: BuildJob, context: BuildContext): Promise<void> {
    await context.say(SIMULATION_NOTE);
    const needsBuild = (await context.latestPreview('web')) === null;
    const offset = needsBuild ? 4 : 0;
    const total = offset + 3;
    if (needsBuild) {
      await context.say('No build exists yet: building first.');
      await this.build(job, context, 0, total);
    }
    await context.step(offset + 1, total, 'Checking the latest build');
    await abortableDelay(this.stepMs, job.signal);
    const appId = await appIdentifier(context);
    await context.step(offset + 2, total, `Signing the build as ${appId} (simulated)`);
    await abortableDelay(this.stepMs, job.signal);
    const preview = await context.latestPreview('web');
    if (!preview) throw new Error('No preview to deploy');
    await context.step(offset + 3, total, 'Publishing the deployment');
    const deployment = await context.publish({ kind: 'deployment', platform: 'web', fromArtifactId: preview.id });
    await context.say(
      `Deploy #${deployment.number}: web (${appId}) published at ${deployment.path} (immutable; see previewUrls of svc_get_session).`,
      'result',
    );
  }
}
