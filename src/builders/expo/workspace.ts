/**
 * A project's Expo workspace: `<dataDir>/workspaces/<projectId>/` holds the app's sources (copied
 * from the toolchain's template), a git repository, and a `node_modules` symlink to the shared
 * toolchain, so a new project costs well under a second and a few hundred KB.
 *
 * Git is the safety net: a successful workflow commits, a failed or cancelled one resets to the
 * last good commit (`git reset --hard` + `git clean -fd`), so a broken edit never poisons the next
 * build. Ignored files (`node_modules`, `.expo/`, export output in `.svc/`) survive a reset.
 */
import { cp, lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { BuildFailure } from '../builder.js';
import type { BuildSandbox } from '../process-sandbox.js';
import { runProcess } from './run-process.js';
import type { ExpoToolchain } from './toolchain.js';

/** What `app.json` is kept in sync with. */
export interface AppIdentity {
  /** Display name (the project's name). */
  name: string;
  /** Reverse-DNS app identifier (`com.example.app`), once the project gave one. */
  identifier?: string | null;
}

/** The folder export output goes to (ignored by git). */
export const OUTPUT_DIR = '.svc';

/** Folders of the workspace never copied into a copy for another SDK. */
const NOT_COPIED = new Set(['node_modules', '.git', '.expo', OUTPUT_DIR]);

/** Commits of history a workspace keeps: older ones are folded into one root commit. */
const HISTORY_KEPT = 20;

const GIT_IDENTITY = [
  '-c',
  'user.name=mobile-builder-mcp',
  '-c',
  'user.email=builder@mobile-builder-mcp.invalid',
  '-c',
  'commit.gpgsign=false',
];

/** One project's workspace (see the file comment). */
export class ExpoWorkspace {
  /** @param sandbox where git runs (default: bubblewrap when it works here). */
  constructor(
    readonly dir: string,
    private readonly toolchain: ExpoToolchain,
    private readonly sandbox?: BuildSandbox,
  ) {}

  /**
   * Creates the workspace from the template when it has no git repository yet, and points its
   * `node_modules` at the toolchain. Cheap when the workspace exists.
   * @throws BuildFailure `workspace_failed` when git cannot create the repository.
   */
  async ensure(identity: AppIdentity): Promise<{ created: boolean }> {
    let created = false;
    if (!(await exists(join(this.dir, '.git')))) {
      await cp(this.toolchain.templateDir, this.dir, { recursive: true, force: true });
      // npm never packs a file named `.gitignore`, so the template ships it as `gitignore`.
      await rename(join(this.dir, 'gitignore'), join(this.dir, '.gitignore'));
      await cp(this.toolchain.packageJsonFile, join(this.dir, 'package.json'));
      await this.linkNodeModules();
      await this.syncAppConfig(identity);
      await this.nameSettings(identity.name);
      await this.git(['init', '-q', '-b', 'main']);
      await this.commit(`Create ${identity.name} from the Expo SDK ${this.toolchain.sdk} template`);
      created = true;
    } else {
      await this.linkNodeModules();
    }
    return { created };
  }

  private async linkNodeModules(dir: string = this.dir, toolchain: ExpoToolchain = this.toolchain): Promise<void> {
    const link = join(dir, 'node_modules');
    const target = toolchain.nodeModules;
    const info = await lstat(link).catch(() => null);
    if (info?.isSymbolicLink() && (await readlink(link)) === target) return;
    if (info) await rm(link, { recursive: true, force: true });
    await symlink(target, link, 'dir');
  }

  /**
   * Writes the project's name, slug and identifiers into `app.json`, and the constant relative
   * base URL of web exports (`experiments.baseUrl: "."`: previews are served under a path, and the
   * base URL is part of Metro's cache key, so it never changes). Also puts back the managed
   * `metro.config.js` (the resolver that keeps bundles inside the app), whatever an agent did to it.
   * @returns true when `app.json` changed.
   */
  async syncAppConfig(identity: AppIdentity): Promise<boolean> {
    await this.syncMetroConfig();
    await this.syncManagedFile('package.json', this.toolchain.packageJsonFile);
    const file = join(this.dir, 'app.json');
    const before = await readFile(file, 'utf8');
    type Section = Record<string, unknown>;
    let config: { expo?: Section & { experiments?: Section; ios?: Section; android?: Section } };
    try {
      config = JSON.parse(before) as typeof config;
    } catch {
      throw new BuildFailure('workspace_failed', 'app.json is not valid JSON.');
    }
    const expo = (config.expo ??= {});
    expo.name = identity.name;
    expo.slug = slugOf(identity.name);
    expo.experiments = { ...(expo.experiments ?? {}), baseUrl: '.' };
    if (identity.identifier) {
      expo.ios = { ...(expo.ios ?? {}), bundleIdentifier: identity.identifier };
      expo.android = { ...(expo.android ?? {}), package: identity.identifier };
    }
    const after = `${JSON.stringify(config, null, 2)}\n`;
    if (after === before) return false;
    await writeFile(file, after);
    return true;
  }

  /** Rewrites `metro.config.js` from the template unless it is equal (a link is replaced, not followed). */
  private async syncMetroConfig(): Promise<void> {
    await this.syncManagedFile('metro.config.js', join(this.toolchain.templateDir, 'metro.config.js'));
  }

  /**
   * Rewrites the workspace's file `name` from `source` unless it is equal (a link is replaced, not
   * followed). `package.json` follows the toolchain: a workspace made with an older SDK moves to
   * the server's SDK at its next build.
   */
  private async syncManagedFile(name: string, source: string): Promise<void> {
    const file = join(this.dir, name);
    const wanted = await readFile(source, 'utf8');
    const info = await lstat(file).catch(() => null);
    if (info?.isFile() && (await readFile(file, 'utf8')) === wanted) return;
    await rm(file, { recursive: true, force: true });
    await writeFile(file, wanted, { flag: 'wx' });
  }

  /**
   * A copy of the app's sources in `.svc/sdk-<sdk>/` that builds with another SDK's toolchain: its
   * `package.json` and a `node_modules` link to that toolchain (links in the sources are copied as
   * links, never followed; `linksLeaving` already refused any that leave the workspace).
   * @returns the copy's folder.
   */
  async stageFor(toolchain: ExpoToolchain): Promise<string> {
    const dir = join(this.dir, OUTPUT_DIR, `sdk-${toolchain.sdk}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    for (const entry of await readdir(this.dir)) {
      if (NOT_COPIED.has(entry)) continue;
      await cp(join(this.dir, entry), join(dir, entry), { recursive: true, verbatimSymlinks: true });
    }
    await cp(toolchain.packageJsonFile, join(dir, 'package.json'));
    await this.linkNodeModules(dir, toolchain);
    return dir;
  }

  /** Puts the app's name into the template's `src/app-settings.json` (what its `App.tsx` shows). */
  private async nameSettings(name: string): Promise<void> {
    const file = join(this.dir, 'src', 'app-settings.json');
    try {
      const settings = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      await writeFile(file, `${JSON.stringify({ ...settings, name }, null, 2)}\n`);
    } catch {
      // Not the shipped template's layout: nothing to name.
    }
  }

  /** The app's public config (`app.json`'s `expo` object). */
  async appConfig(): Promise<Record<string, unknown>> {
    return (JSON.parse(await readFile(join(this.dir, 'app.json'), 'utf8')) as { expo: Record<string, unknown> }).expo;
  }

  /**
   * Commits every change (nothing when the tree is clean).
   * @returns true when a commit was made.
   */
  async commit(message: string): Promise<boolean> {
    await this.git(['add', '-A']);
    const status = await this.git(['status', '--porcelain']);
    if (status.length === 0) return false;
    await this.git(['commit', '-q', '--no-verify', '-m', message]);
    return true;
  }

  /**
   * Prepares the commit of every change without making it HEAD yet, in one git process (what a
   * build runs beside its export, docs/performance.md "Round three"): stages every file (`git add
   * -A`), writes the commit of that tree on HEAD with `message` (cleaned up as `git commit -m`
   * does), and reads the history's length and the tracked files. `advance` then makes the commit
   * HEAD; until then a `reset` still goes back to the last good commit.
   * @throws BuildFailure `workspace_failed` when git fails.
   */
  async stage(message: string): Promise<StagedCommit> {
    const script = [
      'git add -A',
      'tree=$(git write-tree)',
      'head=$(git rev-parse HEAD)',
      'headTree=$(git rev-parse "HEAD^{tree}")',
      'echo "head $head"',
      'echo "tree $tree"',
      // What `git commit -m` stores: the message with its whitespace cleaned up.
      'if [ "$tree" != "$headTree" ]; then',
      '  commit=$(printf "%s\\n" "$1" | git stripspace | git commit-tree "$tree" -p "$head")',
      '  echo "commit $commit"',
      'fi',
      'count=$(git rev-list --count "$head")',
      'echo "count $count"',
      'echo files',
      'git ls-files',
    ];
    const lines = await this.gitScript(script, [message]);
    const field = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.slice(name.length + 1) ?? null;
    const head = field('head');
    const tree = field('tree');
    const commit = field('commit');
    const count = Number(field('count'));
    const files = lines.indexOf('files');
    if (!head || !tree || !Number.isInteger(count) || files < 0)
      throw new BuildFailure('workspace_failed', 'git did not stage the workspace.');
    return { head, tree, commit, count: count + (commit ? 1 : 0), files: lines.slice(files + 1) };
  }

  /**
   * Makes the commit `stage` prepared HEAD, in one git process, provided the files are still
   * those staged (`git add -A` gives the same tree); the history is unchanged when nothing was
   * staged to commit.
   * @returns false, moving nothing, when a file changed since `stage` (then `commit` is the way).
   * @throws BuildFailure `workspace_failed` when git fails (HEAD moved on since `stage`, for one).
   */
  async advance(staged: StagedCommit): Promise<boolean> {
    const script = [
      'git add -A',
      'tree=$(git write-tree)',
      'if [ "$tree" != "$1" ]; then echo changed; exit 0; fi',
      'if [ -n "$2" ]; then git update-ref HEAD "$2" "$3"; fi',
      'echo advanced',
    ];
    const lines = await this.gitScript(script, [staged.tree, staged.commit ?? '', staged.head]);
    return lines.at(-1) === 'advanced';
  }

  /**
   * Keeps the newest `keep` commits: once the history holds twice as many, the older ones are
   * folded into one root commit (same trees, same messages for the kept ones), and git's unreachable
   * objects are deleted. Each build adds a commit, so without this a workspace grows for ever.
   * @param options.keep commits kept (default `HISTORY_KEPT`); `options.known`: the history's
   *   length when the caller knows it (`StagedCommit.count`): no git process runs unless there is
   *   something to fold.
   * @returns the number of commits folded away (0 when the history was short enough).
   */
  async pruneHistory({ keep = HISTORY_KEPT, known }: { keep?: number; known?: number } = {}): Promise<number> {
    const count = known ?? Number((await this.git(['rev-list', '--count', 'HEAD']))[0] ?? '0');
    if (count <= keep * 2) return 0;
    const kept = await this.git(['rev-list', '--reverse', `--max-count=${keep}`, 'HEAD']);
    const oldest = kept[0]!;
    const folded = count - keep;
    let parent = (
      await this.git([
        'commit-tree',
        `${oldest}^{tree}`,
        '-m',
        `Earlier history (${folded + 1} commits) folded to keep the workspace small`,
      ])
    )[0]!;
    for (const commit of kept.slice(1)) {
      const message = (await this.git(['log', '-1', '--format=%B', commit])).join('\n');
      parent = (await this.git(['commit-tree', `${commit}^{tree}`, '-p', parent, '-m', message]))[0]!;
    }
    await this.git(['update-ref', 'HEAD', parent]);
    await this.git(['reflog', 'expire', '--expire=now', '--all']);
    await this.git(['gc', '--prune=now', '--quiet']);
    return folded;
  }

  /** Puts the workspace back at its last commit: tracked files restored, untracked ones removed. */
  async reset(): Promise<void> {
    if (!(await exists(join(this.dir, '.git')))) return;
    // One process for both (each sandboxed git process costs tens of ms on a busy machine).
    await this.gitScript(['git reset -q --hard HEAD', 'git clean -fdq']);
  }

  /**
   * Symbolic links in the app's sources that point outside the workspace (what a hostile or
   * careless agent might leave), as workspace-relative paths. `node_modules`, `.git` and the
   * output folders are not searched.
   */
  async linksLeaving(): Promise<string[]> {
    const found: string[] = [];
    const skip = new Set(['node_modules', '.git', '.expo', OUTPUT_DIR]);
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > 20 || found.length >= 10) return;
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (dir === this.dir && skip.has(entry.name)) continue;
        const path = join(dir, entry.name);
        if (entry.isSymbolicLink()) {
          const target = resolve(dir, await readlink(path));
          const rel = relative(this.dir, target);
          if (rel.startsWith('..') || isAbsolute(rel)) found.push(relative(this.dir, path));
        } else if (entry.isDirectory()) await walk(path, depth + 1);
      }
    };
    await walk(this.dir, 0);
    return found;
  }

  /** The files git tracks (for agents and messages). */
  async trackedFiles(): Promise<string[]> {
    return this.git(['ls-files']);
  }

  private git(args: string[]): Promise<string[]> {
    return this.run('git', [...GIT_IDENTITY, ...args], args[0]!);
  }

  /**
   * Runs the fixed `lines` in one `/bin/sh` (stopping at the first failure), `git` being git with
   * the builder's identity; `args` are the script's `$1`, `$2`…, never part of its text.
   * @returns the script's output lines.
   * @throws BuildFailure `workspace_failed` when it fails.
   */
  private gitScript(lines: string[], args: string[] = []): Promise<string[]> {
    const identity = GIT_IDENTITY.map((arg) => `'${arg}'`).join(' ');
    const script = [`git() { command git ${identity} "$@"; }`, 'set -e', ...lines].join('\n');
    return this.run('/bin/sh', ['-c', script, 'sh', ...args], 'script');
  }

  private async run(command: string, args: string[], what: string): Promise<string[]> {
    const lines: string[] = [];
    const result = await runProcess({
      command,
      args,
      cwd: this.dir,
      // Nothing of the server's environment: git sees the workspace and a private home only.
      env: { GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
      binds: { rw: [this.dir] },
      ...(this.sandbox && { sandbox: this.sandbox }),
      onStdout: (line) => lines.push(line),
      timeoutMs: 60_000,
    });
    if (result.code !== 0)
      throw new BuildFailure(
        'workspace_failed',
        `git ${what} failed in the workspace:\n${result.tail.slice(-5).join('\n')}`,
      );
    return lines;
  }
}

/** A commit `ExpoWorkspace.stage` prepared, for `advance` (ids as git prints them). */
export interface StagedCommit {
  /** HEAD when staged: the commit the new one follows. */
  head: string;
  /** The tree of every file as staged. */
  tree: string;
  /** The new commit, or null when the tree is HEAD's (nothing to commit). */
  commit: string | null;
  /** Commits in the history once the new one is HEAD. */
  count: number;
  /** The tracked files, as `git ls-files` prints them (the checkpoint's files). */
  files: string[];
}

/** A URL- and store-safe slug of a name: `My Habit Tracker!` -> `my-habit-tracker`. */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'app';
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null)) !== null;
}
