/**
 * A project's environment variables (docs/security.md "Project environment"): set, listed and
 * removed by the operator's command line (`env set|list|unset`) and by the owner in the web
 * console, never through the tools. Plain values are stored as given; secrets are sealed
 * (`io/secret-box.ts`) and opened only for the build that runs the project's workflow.
 *
 * Rules: a name is `^[A-Za-z_][A-Za-z0-9_]{0,127}$`, not one the service or the sandbox sets (SVC_*,
 * PATH, HOME, ...); a secret is at least `SECRET_MIN_LENGTH` characters (shorter ones could not be
 * told apart from ordinary text when output is redacted) and never `EXPO_PUBLIC_*` (Expo inlines those
 * into the app, for anyone who has it to read).
 */
import { invalidParameter } from '../errors.js';
import type { Clock } from '../clock.js';
import { isoNow } from '../clock.js';
import type { BuildEnvironment } from '../builders/builder.js';
import type { SecretBox } from '../io/secret-box.js';
import type { Repos } from '../store/repos.js';
import type { Caller } from '../auth/caller.js';
import type { ProjectAccess } from './project-access.js';

/** Shortest secret value, in characters. */
const SECRET_MIN_LENGTH = 8;
/** Longest value, in characters. */
const VALUE_MAX_LENGTH = 32_768;
/** Variables one project may hold. */
const VARIABLES_MAX = 100;
const NAME_RULE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Names the service or the build sandbox sets itself. */
const RESERVED = /^(SVC_.*|PATH|HOME|TMPDIR|USER|SHELL|PWD|LANG|LC_.*|NODE_OPTIONS|NODE_PATH|LD_.*|GIT_.*|CI)$/i;

/** One variable as `env list` and the console show it: a secret's value never. */
export interface EnvEntry {
  name: string;
  secret: boolean;
  /** The plain value; null for a secret. */
  value: string | null;
  updatedAt: string;
}

/** What the service needs: the repositories, the secrets' key and the clock. */
export interface ProjectEnvDeps {
  repos: Pick<Repos, 'projectEnv' | 'projects'>;
  box: SecretBox;
  clock: Clock;
}

/** The environment of projects (see the file comment). */
export class ProjectEnvService {
  constructor(private readonly deps: ProjectEnvDeps) {}

  /**
   * Creates or replaces a variable.
   * @returns true when it replaced one of the same name
   * @throws ServiceError -32602 for a bad name or value, a project with `VARIABLES_MAX` already, or an
   *   unknown project (`data.projectId`); SecretKeyError when the key file is malformed
   */
  async set(projectId: string, name: string, value: string, secret: boolean): Promise<boolean> {
    const { repos, box } = this.deps;
    if (!(await repos.projects.findById(projectId)))
      throw invalidParameter('project', 'names no project', { projectId });
    checkVariable(name, value, secret);
    const existing = await repos.projectEnv.list(projectId);
    const replaced = existing.some((row) => row.name === name);
    if (!replaced && existing.length >= VARIABLES_MAX)
      throw invalidParameter('name', `is one too many: a project holds at most ${VARIABLES_MAX} variables`);
    await repos.projectEnv.put({
      projectId,
      name,
      value: secret ? await box.seal(projectId, name, value) : value,
      secret,
      updatedAt: isoNow(this.deps.clock),
    });
    return replaced;
  }

  /** The project's variables, by name; secrets without their value. */
  async list(projectId: string): Promise<EnvEntry[]> {
    return (await this.deps.repos.projectEnv.list(projectId)).map((row) => ({
      name: row.name,
      secret: row.secret,
      value: row.secret ? null : row.value,
      updatedAt: row.updatedAt,
    }));
  }

  /** Removes a variable. @returns false when there was none of that name */
  unset(projectId: string, name: string): Promise<boolean> {
    return this.deps.repos.projectEnv.remove(projectId, name);
  }

  /**
   * The environment of a build of the project: plain values and opened secrets.
   * @throws SecretKeyError when a secret does not open with this server's key (the build fails, saying so)
   */
  async forBuild(projectId: string): Promise<BuildEnvironment> {
    const plain: Record<string, string> = {};
    const secrets: Record<string, string> = {};
    for (const row of await this.deps.repos.projectEnv.list(projectId)) {
      if (row.secret) secrets[row.name] = await this.deps.box.open(projectId, row.name, row.value);
      else plain[row.name] = row.value;
    }
    return { plain, secrets };
  }
}

/** A project's environment as its owner reaches it (the web console): every call checks the caller owns the project. */
export class OwnerEnvironment {
  constructor(
    private readonly env: ProjectEnvService,
    private readonly access: Pick<ProjectAccess, 'writable'>,
  ) {}

  /** The variables, a secret's value never. @throws ServiceError -32004/-32003 (not the owner) */
  async list(caller: Caller, projectId: string): Promise<EnvEntry[]> {
    await this.access.writable(caller, projectId);
    return this.env.list(projectId);
  }

  /** `ProjectEnvService.set` for the owner. @throws ServiceError -32004/-32003, and as `set` */
  async set(
    caller: Caller,
    projectId: string,
    variable: { name: string; value: string; secret: boolean },
  ): Promise<void> {
    await this.access.writable(caller, projectId);
    await this.env.set(projectId, variable.name, variable.value, variable.secret);
  }

  /** Removes a variable. @returns false when there was none @throws ServiceError -32004/-32003 */
  async unset(caller: Caller, projectId: string, name: string): Promise<boolean> {
    await this.access.writable(caller, projectId);
    return this.env.unset(projectId, name);
  }
}

/** @throws ServiceError -32602 naming what is wrong with the variable (see the file comment) */
function checkVariable(name: string, value: string, secret: boolean): void {
  if (!NAME_RULE.test(name))
    throw invalidParameter('name', 'must be letters, digits and _ (not starting with a digit), at most 128 characters');
  if (RESERVED.test(name)) throw invalidParameter('name', 'is set by the service or the build sandbox itself');
  if (value.length > VALUE_MAX_LENGTH) throw invalidParameter('value', `is longer than ${VALUE_MAX_LENGTH} characters`);
  if (value.includes('\0')) throw invalidParameter('value', 'holds a NUL character');
  if (!secret) return;
  if (/^EXPO_PUBLIC_/i.test(name))
    throw invalidParameter('name', 'EXPO_PUBLIC_ variables are inlined into the app by Expo: they cannot be secrets');
  if ([...value].length < SECRET_MIN_LENGTH)
    throw invalidParameter('value', `of a secret must be at least ${SECRET_MIN_LENGTH} characters`);
}
