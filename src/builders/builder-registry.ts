/**
 * The builder registry (docs/architecture.md, "Builders"): every builder the server can run, by
 * its `--builder` name, and the one place that reaches into a builder's folder. Adding a builder is
 * a folder with its `BuilderModule` and one line in `BUILDERS`.
 *
 * The server runs one builder (`--builder`), but what builders leave behind outlives that choice:
 * deployments published yesterday by `expo` are still fetched by phones after a restart with
 * `--builder command`, and a question stays pending across restarts. So the routes, the answer
 * checks by question kind, the `svc_send_message` rules and the view of messages for other readers
 * are those of every registered builder, and `tools/list` does not change with `--builder`.
 */
import type { Builder } from './builder.js';
import type {
  BuilderModule,
  BuilderRoutes,
  BuilderRouteSources,
  CommonBuilderSettings,
  QuestionKindRules,
} from './builder-module.js';
import { commandBuilderModule } from './command-module.js';
import { expoBuilderModule } from './expo/expo-module.js';
import { scriptedBuilderModule } from './scripted-module.js';

/** Every builder, in the order `--help` and error messages name them. */
const BUILDERS = [scriptedBuilderModule, commandBuilderModule, expoBuilderModule] as const;

/** A builder name accepted by `--builder` (docs/builders.md#builders). */
export type BuilderName = (typeof BUILDERS)[number]['name'];

/** The builders a server can be started with (docs/builders.md#builders). */
export const BUILDER_NAMES: readonly BuilderName[] = BUILDERS.map((module) => module.name);

type SettingsOf<M> = M extends BuilderModule<string, infer S> ? S : never;
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/** The server settings the builders read: the fields of `AppConfig` every module declares, and the common ones. */
export type BuilderSettings = Intersection<SettingsOf<(typeof BUILDERS)[number]>> & CommonBuilderSettings;

const modules: readonly BuilderModule<BuilderName, BuilderSettings>[] = BUILDERS;

/** The question kinds of every builder; a kind declared twice is a programming error. */
const QUESTION_KINDS: ReadonlyMap<string, QuestionKindRules> = (() => {
  const kinds = new Map<string, QuestionKindRules>();
  for (const module of modules) {
    for (const [kind, rules] of Object.entries(module.questionKinds ?? {})) {
      if (kinds.has(kind) || kind === 'text')
        throw new Error(`builder ${module.name} declares the question kind "${kind}", which is taken`);
      kinds.set(kind, rules);
    }
  }
  return kinds;
})();

function moduleOf(name: string): BuilderModule<BuilderName, BuilderSettings> {
  const module = modules.find((m) => m.name === name);
  if (!module) throw new Error(`Unknown builder "${name}": use one of ${BUILDER_NAMES.join(', ')}`);
  return module;
}

/**
 * Creates the builder `name` from the server's settings.
 * @throws Error for an unknown name, or settings the builder refuses (a missing config file, an unknown SDK).
 */
export function createBuilder(name: string, settings: BuilderSettings): Builder {
  return moduleOf(name).create(settings);
}

/** True when builder `name` starts processes (then `serve --http` needs a build sandbox). @throws Error for an unknown name. */
export function builderRunsProcesses(name: string): boolean {
  return moduleOf(name).runsProcesses;
}

/** Runs every builder's start-up checks (a bad `--updates-signing-key` fails here). @throws Error naming the setting. */
export function checkBuilderSettings(settings: BuilderSettings): void {
  for (const module of modules) module.checkSettings?.(settings);
}

/** The routes every builder adds to one HTTP listener. @throws Error for unreadable settings. */
export function builderRoutes(sources: BuilderRouteSources, settings: BuilderSettings): BuilderRoutes[] {
  return modules.flatMap((module) => (module.routes ? [module.routes(sources, settings)] : []));
}

/** The rules of answers to questions of `kind`, or undefined for `text` (options and pattern) and unknown kinds. */
export function questionKind(kind: string): QuestionKindRules | undefined {
  return QUESTION_KINDS.get(kind);
}

/** What `svc_send_message`'s description says about answering the builders' questions (bullet lines). */
export const BUILDER_MESSAGE_RULES: readonly string[] = modules.flatMap((module) => module.messageRules ?? []);

/** A conversation message as a reader who is not the project's owner sees it (each builder hides its private links). */
export function forOtherReaders(content: string): string {
  return modules.reduce((text, module) => module.forOtherReaders?.(text) ?? text, content);
}
