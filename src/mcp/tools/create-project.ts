/** `svc_create_project` (spec section 4, limits of section 8). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { boundedText } from '../parameters.js';
import { projectSchema } from '../resource-schemas.js';

/** Creates a project for the caller, within the plan's limits. */
export const createProjectTool = defineTool({
  name: 'svc_create_project',
  title: 'Create a project',
  description: [
    'Creates a new native mobile app project owned by the user of the API token and returns it. The project starts empty: send it a build instruction with svc_send_message next.',
    'name is kept exactly as given (1 to 255 characters, not blank). description is optional (at most 1000 characters). visibility is "private" (default, only the owner sees it) or "public" (anyone with the id can read it).',
    'Errors: -32602 a parameter is missing, too long, blank or not one of the allowed values (error.data.issues lists them); -32005 with error.data.scope "project_creation" when the hourly creation limit is reached (error.data.resetAt says when to retry); -32003 with error.data.reason "project_limit_reached" when the plan\'s project cap is reached; -32001 bad API token.',
  ].join('\n'),
  input: z.strictObject({
    name: boundedText(255, 'Project name, kept as given', { nonBlank: true }),
    description: boundedText(1000, 'What the app is for').nullable().optional(),
    visibility: z.enum(['public', 'private']).optional().describe('Default "private"'),
  }),
  output: projectSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handle: (args, { caller, services }) => services.projects.create(caller, args),
});
