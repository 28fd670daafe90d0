/**
 * The `expo` builder's entry in the builder registry (docs/architecture.md, "Builders"): the
 * builder from `--expo-sdk`, `--agent` and the rest, the Expo Updates routes of its native
 * deployments, its `code` questions, and the private update links hidden from other readers.
 */
import { defineBuilder } from '../builder-module.js';
import { CODE_ANSWER_MESSAGE_RULES, CODE_QUESTION_KIND } from './code-question-kind.js';
import { createExpoBuilder, type ExpoBuilderSettings } from './index.js';
import { hideLatestUpdatePaths } from './update-channels.js';
import { createExpoUpdateRoutes, loadUpdatesSigningKey } from './update-routes.js';

/** The server settings the expo builder reads (fields of `AppConfig`). */
export interface ExpoModuleSettings {
  /** Settings of the `expo` builder (`--expo-sdk`, `--agent-command`, ...). */
  expo?: Omit<ExpoBuilderSettings, 'dataDir'> | undefined;
  /** PEM private key that signs Expo Updates manifests (`--updates-signing-key`). */
  updatesSigningKeyFile?: string | undefined;
}

/** The `expo` builder module. */
export const expoBuilderModule = defineBuilder<'expo', ExpoModuleSettings>({
  name: 'expo',
  runsProcesses: true,
  create: (settings) =>
    createExpoBuilder({
      ...settings.expo,
      dataDir: settings.dataDir,
      ...(settings.buildSandbox && { sandbox: settings.buildSandbox }),
    }),
  checkSettings: (settings) => {
    if (settings.updatesSigningKeyFile) loadUpdatesSigningKey(settings.updatesSigningKeyFile);
  },
  routes: (sources, settings) =>
    createExpoUpdateRoutes({ ...sources, updatesSigningKeyFile: settings.updatesSigningKeyFile }),
  questionKinds: { code: CODE_QUESTION_KIND },
  messageRules: CODE_ANSWER_MESSAGE_RULES,
  forOtherReaders: hideLatestUpdatePaths,
});
