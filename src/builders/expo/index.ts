/**
 * The `expo` builder's public surface: its settings and a factory that assembles it from them.
 */
import { join } from 'node:path';
import { DEFAULTS } from '../../config/defaults.js';
import type { BuildSandbox } from '../process-sandbox.js';
import type { AgentMode, AgentStep } from './agent-step.js';
import { CommandAgent } from './command-agent.js';
import { DeterministicEdits } from './deterministic-edits.js';
import { ExpoBuilder } from './expo-builder.js';
import { HeavyStepSemaphore } from '../heavy-steps.js';
import { HostAgent } from './host-agent.js';
import { DEFAULT_EXPO_SDK, ExpoToolchain } from './toolchain.js';

export { DEFAULT_EXPO_SDK, SUPPORTED_EXPO_SDKS } from './toolchain.js';
export { AGENT_MODES, type AgentMode } from './agent-step.js';

/** What `serve` passes to the `expo` builder (design: `--expo-sdk`, `--agent-command`). */
export interface ExpoBuilderSettings {
  dataDir: string;
  /** Where toolchains are installed (default `<dataDir>/toolchains`). */
  toolchainsDir?: string;
  sdk?: number;
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

/** The toolchain a server with these settings uses. @throws Error for an SDK this package does not ship. */
export function toolchainFor(settings: Pick<ExpoBuilderSettings, 'dataDir' | 'toolchainsDir' | 'sdk'>): ExpoToolchain {
  return new ExpoToolchain(settings.toolchainsDir ?? join(settings.dataDir, 'toolchains'), settings.sdk ?? DEFAULT_EXPO_SDK);
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
    toolchain: toolchainFor(settings),
    agent,
    heavy: new HeavyStepSemaphore(settings.heavySteps ?? DEFAULTS.maxHeavySteps),
    ...(settings.installToolchain !== undefined && { installToolchain: settings.installToolchain }),
    ...(settings.stepTimeoutSeconds !== undefined && { stepTimeoutMs: settings.stepTimeoutSeconds * 1000 }),
    ...(settings.toolchainEnv && { toolchainEnv: settings.toolchainEnv }),
    ...(settings.sandbox && { sandbox: settings.sandbox }),
  });
}
