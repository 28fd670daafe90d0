/**
 * The console's projects list, `/projects` (docs/contract.md "Web console"): `GET` lists the person's
 * projects with their state badges; `POST` creates one with `svc_create_project`'s own rules.
 */
import type { ServerResponse } from 'node:http';
import type { FormArguments, ToolArguments } from '../mcp/tool-caller.js';
import type { TOOLS } from '../mcp/tools/index.js';
import type { Project } from '../services/resource-shapes.js';
import type { ProjectState } from '../services/project-state.js';
import type { ConsoleContext } from './console-context.js';
import type { SignedInRequest } from './console-guards.js';
import { redirect } from './http-util.js';
import { projectsPage, type ProjectDraft } from './pages.js';
import { shown } from './shown-error.js';

/** Serves `/projects` after the session, form and rate limit guards. */
export async function projectsList(ctx: ConsoleContext, res: ServerResponse, state: SignedInRequest): Promise<void> {
  const { session, viewer, form } = state;
  if (form) return createProject(ctx, res, state, form);
  try {
    const { projects } = await ctx.tools.listProjects({}, session.caller);
    return ctx.page(res, 200, projectsPage(viewer, { projects, states: await ctx.deps.projectStates(session.caller) }));
  } catch (error) {
    return ctx.failurePage(res, error, viewer);
  }
}

/** `POST /projects`: to the new project's page, or the list again with the error and the form as it was sent. */
async function createProject(
  ctx: ConsoleContext,
  res: ServerResponse,
  { session, viewer }: SignedInRequest,
  form: URLSearchParams,
): Promise<void> {
  const draft: ProjectDraft = {
    name: form.get('name') ?? '',
    description: form.get('description') ?? '',
    visibility: form.get('visibility') ?? 'private',
  };
  const args: FormArguments<ToolArguments<typeof TOOLS.createProject>> = {};
  const name = form.get('name');
  if (name !== null) args.name = name;
  const description = form.get('description');
  if (description !== null && description !== '') args.description = description;
  const visibility = form.get('visibility');
  if (visibility !== null) args.visibility = visibility;
  try {
    const created = await ctx.tools.createProject.fromForm(args, session.caller);
    return redirect(res, `/projects/${created.id}`);
  } catch (error) {
    const s = shown(error);
    if (s.status === 500) ctx.deps.logger.error({ err: error }, 'web console action failed');
    let projects: Project[] = [];
    let states: ReadonlyMap<string, ProjectState> = new Map();
    try {
      projects = (await ctx.tools.listProjects({}, session.caller)).projects;
      states = await ctx.deps.projectStates(session.caller);
    } catch {
      // The list is only shown beside the error.
    }
    return ctx.page(
      res,
      s.status,
      projectsPage(viewer, { projects, states, error: s.error, draft }),
      s.retryAfter !== undefined ? { 'Retry-After': String(s.retryAfter) } : {},
    );
  }
}
