/** `svc_get_project` (docs/contract.md#tools). */
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { errorGuide } from './error-guide.js';
import { uuidParameter } from '../parameters.js';
import { projectSchema } from '../../services/resource-shapes.js';

/** Reads one project (own, or anyone's public one). */
export const getProjectTool = defineTool({
  name: 'svc_get_project',
  title: 'Get a project',
  description: [
    "Reads one project by its id: name, description, visibility and timestamps. Works for the caller's own projects and for other users' public projects.",
    'Use it to check a project before sending work to it. For build progress and preview URLs use svc_get_session instead.',
    errorGuide([
      "-32602: projectId is missing or not a UUID. Take ids from svc_list_projects or from svc_create_project's response; do not make one up.",
      '-32004 (error.data.resource "project", reason "unknown id"): no project has this id. Check the id with svc_list_projects.',
      "-32003: the project is another user's private project. You cannot read it; do not retry.",
    ]),
  ].join('\n'),
  input: z.strictObject({ projectId: uuidParameter('UUID of the project') }),
  output: projectSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handle: ({ projectId }, { caller, services }) => services.projects.get(caller, projectId),
  // One project row and the caller's access to it (owner and visibility never change): covered by
  // the store's row generation, or on PostgreSQL by its project cache's (`memoCovers`).
  memo: () => true,
  memoCovers: 'project',
});
