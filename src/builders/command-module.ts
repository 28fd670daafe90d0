/** The `command` builder's entry in the builder registry (docs/builders.md#builders): the operator's own commands. */
import { defineBuilder } from './builder-module.js';
import { CommandBuilder, loadCommandBuilderConfig } from './command-builder.js';

/** The server settings the command builder reads (fields of `AppConfig`). */
export interface CommandModuleSettings {
  /** JSON config of the command builder (`--builder-config`; required with it). */
  builderConfigFile?: string | undefined;
}

/** The `command` builder module. @throws from `create` without `builderConfigFile`, or for an unreadable one. */
export const commandBuilderModule = defineBuilder<'command', CommandModuleSettings>({
  name: 'command',
  runsProcesses: true,
  create: (settings) => {
    if (!settings.builderConfigFile)
      throw new Error('The command builder needs --builder-config FILE (JSON with "build" and/or "deploy" commands)');
    return new CommandBuilder(loadCommandBuilderConfig(settings.builderConfigFile), settings.buildSandbox);
  },
});
