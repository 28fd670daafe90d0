/** `svc_create_project` (docs/contract.md#tools, docs/contract.md#limits-and-plans). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { boundedText } from '../parameters.js';
import { PROJECT_DESCRIPTION_MAX, PROJECT_NAME_MAX, projectSchema } from '../../services/resource-shapes.js';

/** Creates a project for the caller, within the plan's limits. */
export const createProjectTool = defineTool({
  name: 'svc_create_project',
  title: 'Create a project',
  description: [
    'Creates a new native mobile app project owned by the user of the API token and returns it. The project starts empty: send it a build instruction with svc_send_message next.',
    `name is kept exactly as given (1 to ${PROJECT_NAME_MAX} characters, not blank). description is optional (at most ${PROJECT_DESCRIPTION_MAX} characters). visibility is "private" (default, only the owner sees it) or "public" (anyone with the id can read it).`,
    errorGuide([
      '-32602: a parameter is missing, too long, blank or not an allowed value; error.data.issues lists each one. Fix them and call again.',
      '-32005 with error.data.scope "project_creation": the user created as many projects this hour as the plan allows (10 an hour on the free plan). This is not the request rate: other tools still work. Nothing was created. Reuse an existing project (svc_list_projects) or retry after error.data.retryAfterSeconds seconds, which can be up to an hour.',
      '-32003 with error.data.reason "project_limit_reached": the user owns as many projects as the plan allows (error.data.limit). Retrying will keep failing; reuse an existing project or tell the user.',
    ]),
  ].join('\n'),
  input: z.strictObject({
    name: boundedText(PROJECT_NAME_MAX, 'Project name, kept as given', { nonBlank: true }),
    description: boundedText(PROJECT_DESCRIPTION_MAX, 'What the app is for').nullable().optional(),
    visibility: z.enum(['public', 'private']).optional().describe('Default "private"'),
  }),
  output: projectSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handle: (args, { caller, services }) => services.projects.create(caller, args),
});
