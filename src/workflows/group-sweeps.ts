/**
 * The engine's side of build process groups (docs/workflows.md "Build processes"): the groups a
 * build reports are recorded; whoever ends or takes over a workflow on the same host kills them,
 * and no workflow of the project is claimed while one lives. Signalling itself is
 * `process-groups.ts`.
 */
import type { Tx } from '../store/store.js';
import type { EngineState } from './engine-state.js';
import type { LocalRun } from './local-run.js';
import { isGroupAlive, isReusedGroup, killGroup } from './process-groups.js';

/** Kills and forgets the process groups recorded on this host. */
export class GroupSweeps {
  constructor(private readonly state: EngineState) {}

  /**
   * Kills what is left of a local run's process groups (SIGTERM, then SIGKILL after the capped
   * grace), and forgets each one that is gone.
   */
  async killRun(run: LocalRun): Promise<void> {
    const { store } = this.state.deps;
    const { runner } = this.state;
    await Promise.all(
      [...run.groups].map(async ([pgid, leaderStart]) => {
        // A group that ended without being released may have handed its id to another process.
        if (isReusedGroup(pgid, leaderStart) || (await killGroup(pgid, this.state.settings.killGraceMs))) {
          run.groups.delete(pgid);
          await store.repos.processGroups.remove(runner.host, pgid);
        }
      }),
    );
  }

  /** Kills the groups recorded on this host for workflow `workflowId` (one no live runner holds). */
  async killRecorded(workflowId: string): Promise<void> {
    const { processGroups } = this.state.deps.store.repos;
    for (const group of await processGroups.listByHost(this.state.runner.host)) {
      if (group.workflowId !== workflowId) continue;
      if (isReusedGroup(group.pgid, group.leaderStart)) {
        await processGroups.remove(group.host, group.pgid);
        continue;
      }
      if (await killGroup(group.pgid, this.state.settings.killGraceMs))
        await processGroups.remove(group.host, group.pgid);
    }
  }

  /**
   * Kills process groups recorded on this host whose workflow no live runner holds. Never throws
   * (a failure is logged).
   * @returns how many groups it killed (a project waiting for them may start its next workflow).
   */
  async sweep(): Promise<number> {
    const { processGroups, workflows } = this.state.deps.store.repos;
    const { runner, runs } = this.state;
    let killed = 0;
    try {
      for (const group of await processGroups.listByHost(runner.host)) {
        const row = await workflows.findById(group.workflowId);
        if (row && runs.has(row.id) && row.runnerId === runner.id) continue;
        if (row && row.runnerId === group.runnerId && this.state.liveHolder(row)) continue;
        if (isReusedGroup(group.pgid, group.leaderStart)) {
          // The recorded group is gone and its id now names another process: forget it, never signal it.
          await processGroups.remove(group.host, group.pgid);
          continue;
        }
        if (await killGroup(group.pgid, this.state.settings.killGraceMs)) {
          await processGroups.remove(group.host, group.pgid);
          killed++;
        } else
          this.state.deps.logger.error(
            { pgid: group.pgid, workflowId: group.workflowId },
            'a build process group survived SIGKILL',
          );
      }
    } catch (error) {
      this.state.deps.logger.error({ err: error }, 'sweeping build process groups failed');
    }
    return killed;
  }

  /**
   * Inside `tx`: true while a process group recorded for the project on this host lives (the next
   * workflow must not start over it). Groups found dead are forgotten. Groups of other hosts cannot
   * be checked from here; their own host's engines kill them.
   */
  async liveOnProject(tx: Tx, projectId: string): Promise<boolean> {
    let alive = false;
    for (const group of await tx.processGroups.listByProject(projectId)) {
      if (group.host !== this.state.runner.host) continue;
      if (isGroupAlive(group.pgid) && !isReusedGroup(group.pgid, group.leaderStart)) alive = true;
      else await tx.processGroups.remove(group.host, group.pgid);
    }
    return alive;
  }
}
