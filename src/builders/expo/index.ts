/**
 * The `expo` builder's public surface: its settings and a factory that assembles it from them.
 */
import { join } from 'node:path';
import { DEFAULTS } from '../../core/defaults.js';
import type { BuildSandbox } from '../process-sandbox.js';
import type { AgentMode, AgentStep } from './agent-step.js';
import { CommandAgent } from './command-agent.js';
import { DeterministicEdits } from './deterministic-edits.js';
import { ExpoBuilder } from './expo-builder.js';
import { HeavyStepSemaphore } from '../heavy-steps.js';
import { HostAgent } from './host-agent.js';
import { DEFAULT_EXPO_SDKS, ExpoToolchain } from './toolchain.js';

export { DEFAULT_EXPO_SDKS, NEWEST_KNOWN_EXPO_SDK, SUPPORTED_EXPO_SDKS } from './toolchain.js';
export { AGENT_MODES, type AgentMode } from './agent-step.js';

/** What `serve` passes to the `expo` builder (`--expo-sdks`, `--agent-command`, ...). */
export interface ExpoBuilderSettings {
  dataDir: string;
  /** Where toolchains are installed (default `<dataDir>/toolchains`). */
  toolchainsDir?: string;
  /**
   * The Expo SDKs served (`--expo-sdks`, default `DEFAULT_EXPO_SDKS`): a deploy exports native
   * bundles for each; the first is the SDK of the workspace, previews and type checks.
   */
  sdks?: readonly number[];
  /** Metro's transform cache, shared by every project (default `<dataDir>/cache/metro`). */
  metroCacheDir?: string;
  /**
   * Who writes the code (`--agent`): `host` (the MCP host's model, through code questions),
   * `command` (the operator's code agent), `none` (deterministic edits only). Default: `command`
   * when `agentCommand` is set, else `host`.
   */
  agent?: AgentMode;
  /** The operator's code agent (a shell command line), for `agent: "command"`. */
  agentCommand?: string;
  /** Limit of one agent run, in seconds (`--agent-timeout`, `DEFAULTS.agentTimeoutSeconds`). */
  agentTimeoutSeconds?: number;
  /** Heavy steps (type check, exports) running at once on this server (`--max-heavy-steps`, `DEFAULTS.maxHeavySteps`). */
  heavySteps?: number;
  /** Install the toolchain on first use (default true). */
  installToolchain?: boolean;
  /** Wall-clock limit of one type check or export, in seconds (default: 120 for a type check, 300 for an export; `step-bounds.ts`). */
  stepTimeoutSeconds?: number;
  /** Extra environment for npm during a toolchain install. */
  toolchainEnv?: Readonly<Record<string, string | undefined>>;
  /** Where every child process runs (default: bubblewrap when it works here). */
  sandbox?: BuildSandbox;
  /** Let the code agent reach the network (`--agent-network`; a hosted model's API). */
  agentNetwork?: boolean;
  /** Variables of the server's environment handed to the code agent (`--agent-env`: its API key). */
  agentEnv?: readonly string[];
}

/**
 * The toolchains a server with these settings uses, the workspace's first.
 * @throws Error for an empty list or an SDK this package does not ship.
 */
export function toolchainsFor(
  settings: Pick<ExpoBuilderSettings, 'dataDir' | 'toolchainsDir' | 'sdks'>,
): [ExpoToolchain, ...ExpoToolchain[]] {
  const dir = settings.toolchainsDir ?? join(settings.dataDir, 'toolchains');
  const sdks = [...new Set(settings.sdks ?? DEFAULT_EXPO_SDKS)];
  if (sdks.length === 0) throw new Error('The expo builder needs at least one Expo SDK (--expo-sdks)');
  const [first, ...rest] = sdks.map((sdk) => new ExpoToolchain(dir, sdk));
  return [first!, ...rest];
}

/** The agent step of these settings. @throws Error for `command` without an agent command. */
function agentOf(settings: ExpoBuilderSettings): AgentStep {
  const mode = settings.agent ?? (settings.agentCommand ? 'command' : 'host');
  if (mode === 'host') return new HostAgent();
  if (mode === 'none') return new DeterministicEdits();
  if (!settings.agentCommand) throw new Error('--agent command needs --agent-command <cmd> (the code agent to run)');
  const env: Record<string, string> = {};
  for (const name of settings.agentEnv ?? []) {
    const value = process.env[name];
    if (value !== undefined && !name.startsWith('SVC_')) env[name] = value;
  }
  return new CommandAgent({
    command: settings.agentCommand,
    timeoutMs: (settings.agentTimeoutSeconds ?? DEFAULTS.agentTimeoutSeconds) * 1000,
    env,
    network: settings.agentNetwork === true,
    ...(settings.sandbox && { sandbox: settings.sandbox }),
  });
}

/** Assembles the `expo` builder. @throws Error for an SDK this package does not ship, or agent settings that do not fit. */
export function createExpoBuilder(settings: ExpoBuilderSettings): ExpoBuilder {
  const agent = agentOf(settings);
  return new ExpoBuilder({
    metroCacheDir: settings.metroCacheDir ?? join(settings.dataDir, 'cache', 'metro'),
    toolchains: toolchainsFor(settings),
    agent,
    heavy: new HeavyStepSemaphore(settings.heavySteps ?? DEFAULTS.maxHeavySteps),
    ...(settings.installToolchain !== undefined && { installToolchain: settings.installToolchain }),
    ...(settings.stepTimeoutSeconds !== undefined && { stepTimeoutMs: settings.stepTimeoutSeconds * 1000 }),
    ...(settings.toolchainEnv && { toolchainEnv: settings.toolchainEnv }),
    ...(settings.sandbox && { sandbox: settings.sandbox }),
  });
}
