/**
 * Who may see and change a project (docs/contract.md#tools `svc_get_project`, docs/contract.md#tools):
 * reads are the owner's or anyone's on a public project; writes are the owner's alone.
 */
import type { Caller } from '../auth/caller.js';
import { forbidden, notFound } from '../errors.js';
import type { ProjectRepo } from '../store/repos.js';
import type { ProjectRow } from '../store/rows.js';

/** The read and write access rules of docs/contract.md#tools, in one place. */
export class ProjectAccess {
  constructor(private readonly projects: ProjectRepo) {}

  /**
   * @throws ServiceError `not_found` (-32004, `data` `{resource: "project", reason: "unknown id"}`) for an unknown id; `forbidden` (-32003) for another
   *   user's private project.
   */
  async readable(caller: Caller, projectId: string): Promise<ProjectRow> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound({ resource: 'project', reason: 'unknown id' });
    if (project.ownerId !== caller.userId && project.visibility !== 'public') throw forbidden();
    return project;
  }

  /**
   * @throws ServiceError `not_found` (-32004, `data` `{resource: "project", reason: "unknown id"}`) for an unknown id; `forbidden` (-32003) for any
   *   project the caller does not own, public or not.
   */
  async writable(caller: Caller, projectId: string): Promise<ProjectRow> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound({ resource: 'project', reason: 'unknown id' });
    if (project.ownerId !== caller.userId) throw forbidden();
    return project;
  }
}
