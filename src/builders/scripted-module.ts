/** The `scripted` builder's entry in the builder registry (docs/builders.md#builders): it starts no process. */
import { DEFAULTS } from '../core/defaults.js';
import { defineBuilder } from './builder-module.js';
import { ScriptedBuilder } from './scripted-builder.js';

/** The server settings the scripted builder reads (fields of `AppConfig`). */
export interface ScriptedModuleSettings {
  /** Pause per step, in ms (`--scripted-step-ms`, default `DEFAULTS.scriptedStepMs`). */
  scriptedStepMs?: number | undefined;
}

/** The `scripted` builder module. */
export const scriptedBuilderModule = defineBuilder<'scripted', ScriptedModuleSettings>({
  name: 'scripted',
  runsProcesses: false,
  create: (settings) => new ScriptedBuilder(settings.scriptedStepMs ?? DEFAULTS.scriptedStepMs),
});
