/**
 * The SQLite store's `rowGeneration()` (docs/architecture.md "The session cache"): one number that
 * moves whenever the rows a session shows may have changed, read in one cheap statement, so that a
 * cached session can be served without reading its rows again and is never served stale.
 *
 * - This process's writes: every call of a writing method of the repositories whose rows a session
 *   shows (workflows, questions, artifacts, projects, users: a deleted user or project takes its
 *   workflows with it; the names of projects' variables) moves the number when it is made and again when it settles, inside a
 *   transaction as outside. A method counts as a read only when it is listed in `READ_METHODS`: a
 *   method added later counts as a write until it is listed, so a forgotten list entry costs a
 *   cache miss, never a stale answer.
 * - Another process's commits (the CLI, a second server on the same file): `PRAGMA data_version`
 *   moved since the last look. SQLite cannot say what that process changed, so any of its commits
 *   moves the number.
 */
import type { Repos } from '../repos.js';

/** The repositories whose writes move the generation. */
type CountedRepo = 'workflows' | 'questions' | 'artifacts' | 'projects' | 'users' | 'releases' | 'projectEnv';

/**
 * The methods of each counted repository that only read (or, for `renewLease`, write only what no
 * session shows: a lease's expiry). Every other method is a write.
 */
export const READ_METHODS: Record<CountedRepo, ReadonlySet<string>> = {
  workflows: new Set([
    'nextSeq',
    'findById',
    'findActive',
    'hasActive',
    'listQueued',
    'latestFinished',
    'instructionsBefore',
    'listUnfinishedByOwner',
    'liveLeaseEnds',
    'takeoverCandidates',
    'slotCandidates',
    'runningByOwner',
    'countRunningOf',
    'countQueuedByBuilder',
    'countQueuedByOwner',
    'countByStatus',
    'isHeldBy',
    'renewLease',
  ]),
  questions: new Set(['findById', 'pendingOf', 'findByKey', 'latestAnswer', 'filePagesOf']),
  artifacts: new Set([
    'findById',
    'listByWorkflow',
    'listByKind',
    'latestPerPlatform',
    'bytesUsedByOwner',
    'previewsBeyond',
    'latest',
  ]),
  projects: new Set(['findById', 'listByOwner', 'countByOwner', 'createdSince']),
  users: new Set(['findByName', 'findById', 'list']),
  releases: new Set(['byWorkflow', 'byNumber', 'recent', 'onChannel', 'numbers']),
  // The session lists the names of a project's variables.
  projectEnv: new Set(['list']),
};

/** Whether repository `name`'s writes move the generation. */
function isCounted(name: keyof Repos): name is CountedRepo {
  return Object.hasOwn(READ_METHODS, name);
}

/** The generation of one SQLite connection's session rows (see the file comment). */
export class RowGeneration {
  private own = 0;
  private version: number | undefined;

  /**
   * @param dataVersion reads `PRAGMA data_version` on the store's connection.
   * @param lastVersion the value of the last such read, by any reader of the store (no read).
   */
  constructor(
    private readonly dataVersion: () => number,
    private readonly lastVersion: () => number,
  ) {}

  /**
   * The current generation: equal numbers from two calls mean that no write of this process to a
   * session's rows was made, and no other process committed, between them.
   * @param lastLook other processes' commits as of the store's last `PRAGMA data_version` read,
   *   without a new one (`Store.rowGeneration`).
   * @throws the driver's error once the database is closed (not with `lastLook`).
   */
  current(lastLook = false): number {
    const version = lastLook ? this.lastVersion() : this.dataVersion();
    if (version !== this.version) {
      this.version = version;
      this.own++;
    }
    return this.own;
  }

  /**
   * `repo` (a guarded repository: a plain object of methods returning promises) with each writing
   * method moving the generation when it is called and when its promise settles; the repositories
   * no session shows are returned as they are.
   */
  counted<R extends object>(name: keyof Repos, repo: R): R {
    if (!isCounted(name)) return repo;
    const counted: Record<string, unknown> = {};
    for (const [method, fn] of Object.entries(repo as Record<string, (...args: unknown[]) => Promise<unknown>>))
      counted[method] = this.countedCall(name, method, fn);
    return counted as R;
  }

  /**
   * `call`, method `method` of repository `name`, moving the generation when it is called and when
   * its promise settles if it is a write (see `counted`); as it is if it only reads.
   */
  countedCall(
    name: keyof Repos,
    method: string,
    call: (...args: unknown[]) => Promise<unknown>,
  ): (...args: unknown[]) => Promise<unknown> {
    if (!isCounted(name) || READ_METHODS[name].has(method)) return call;
    // One `then` with both handlers, not `finally` (which makes two more promises per call).
    const settled = <V>(value: V): V => {
      this.own++;
      return value;
    };
    const failed = (error: unknown): never => {
      this.own++;
      throw error;
    };
    return (...args: unknown[]) => {
      this.own++;
      return call(...args).then(settled, failed);
    };
  }
}
