/**
 * The agent step of an `expo` build: what turns the user's instruction into changes of the
 * workspace. Modes (docs/builders.md#expo-default-real-expo-apps):
 * - `none`: deterministic edits only (`deterministic-edits.ts`), each named in a message;
 * - `command`: an operator's code agent run in the workspace (`command-agent.ts`);
 * - `host`: the model of the user's MCP host writes the code through code questions (`host-agent.ts`).
 * A new mode implements `AgentStep` and is picked in `createAgentStep`.
 */
import type { BuildContext, BuildJob } from '../builder.js';
import type { ExpoToolchain } from './toolchain.js';
import type { ExpoWorkspace } from './workspace.js';

/** The agent modes this server knows. */
export type AgentMode = 'none' | 'command' | 'host';

/** The agent modes, for the command line. */
export const AGENT_MODES: readonly AgentMode[] = ['host', 'command', 'none'];

/** The outcome of a type check. */
interface TypeCheckResult {
  ok: boolean;
  /** The compiler's output lines (the first ones), with paths relative to the checked folder. */
  diagnostics: string[];
}

/** What an agent step gets. */
export interface AgentInput {
  job: BuildJob;
  context: BuildContext;
  workspace: ExpoWorkspace;
  /** The Expo SDK of the workspace (told to a code agent). */
  sdk: number;
  /** The workspace's toolchain (of `sdk`). */
  toolchain: ExpoToolchain;
  /** Every served SDK's toolchain, the workspace's first: the code must build with each. */
  toolchains: readonly ExpoToolchain[];
  /**
   * Runs `tsc --noEmit` in `dir` (a copy of the app) in a heavy-step slot, within the type
   * check's bounds (a check stopped at one fails with the reason as its diagnostic).
   * @throws the abort reason on cancel.
   */
  typeCheck(dir: string): Promise<TypeCheckResult>;
}

/** What an agent step did, for the commit message and the result message. */
export interface AgentOutcome {
  /** One line: what changed (`accent colour #22aa55, subtitle`), or what the agent reported. */
  summary: string;
  /** True when the agent type-checked exactly the files it applied (the build does not again). */
  typeChecked?: boolean;
}

/** One way of applying an instruction to the workspace. */
export interface AgentStep {
  readonly mode: AgentMode;
  /** The step's name as shown in progress (`Applying the instruction: deterministic edits`). */
  readonly stepName: string;
  /**
   * Changes the workspace. The build type-checks and exports afterwards, and resets the
   * workspace when anything fails.
   * @throws BuildFailure `agent_failed` or `timeout`; the abort reason on cancel.
   */
  run(input: AgentInput): Promise<AgentOutcome>;
}
