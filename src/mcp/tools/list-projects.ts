/** `svc_list_projects` (docs/contract.md#tools). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { projectListSchema } from '../../services/resource-shapes.js';

/** Lists the caller's projects, newest first. */
export const listProjectsTool = defineTool({
  name: 'svc_list_projects',
  title: 'List my projects',
  description: [
    'Lists every project owned by the user of the API token, public and private, newest first. There is no pagination: all projects are returned, and an empty array means the user has none yet.',
    'Use it to find a projectId before calling svc_get_project, svc_send_message or svc_get_session.',
    errorGuide([]),
  ].join('\n'),
  input: z.strictObject({}),
  output: projectListSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // Project rows: covered by the store's row generation.
  memo: () => true,
  handle: async (_args, { caller, services }) => ({ projects: await services.projects.list(caller) }),
});
