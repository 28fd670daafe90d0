/**
 * The agent step of an `expo` build: what turns the user's instruction into changes of the
 * workspace. Modes (README "Plugging in a code agent"):
 * - `none`: deterministic edits only (`deterministic-edits.ts`), each named in a message;
 * - `command`: an operator's code agent run in the workspace (`command-agent.ts`).
 * A new mode implements `AgentStep` and is picked in `createAgentStep`.
 */
import type { BuildContext, BuildJob } from '../builder.js';
import type { ExpoWorkspace } from './workspace.js';

/** The agent modes this server knows. */
type AgentMode = 'none' | 'command';

/** What an agent step gets. */
export interface AgentInput {
  job: BuildJob;
  context: BuildContext;
  workspace: ExpoWorkspace;
  /** The Expo SDK of the workspace (told to a code agent). */
  sdk: number;
}

/** What an agent step did, for the commit message and the result message. */
export interface AgentOutcome {
  /** One line: what changed (`accent colour #22aa55, subtitle`), or what the agent reported. */
  summary: string;
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
