/** Every tool the server exposes (docs/contract.md#tools), in the order `tools/list` shows them. */
import type { Tool } from '../define-tool.js';
import { cancelWorkflowTool } from './cancel-workflow.js';
import { createProjectTool } from './create-project.js';
import { getMessagesTool } from './get-messages.js';
import { getProjectTool } from './get-project.js';
import { getSessionTool } from './get-session.js';
import { listProjectsTool } from './list-projects.js';
import { sendMessageTool } from './send-message.js';

/** The tools by the name of the typed caller's method (`tool-caller.ts`), each keeping its schemas' types. */
export const TOOLS = {
  listProjects: listProjectsTool,
  getProject: getProjectTool,
  createProject: createProjectTool,
  getSession: getSessionTool,
  sendMessage: sendMessageTool,
  cancelWorkflow: cancelWorkflowTool,
  getMessages: getMessagesTool,
};

export const ALL_TOOLS: readonly Tool[] = Object.values(TOOLS);
